import Covenant
import Dispatch
import Foundation
import XCTest

/// Each buffer type's rules for when senders wait, and `count` / `isEmpty`.
final class CoChannelBufferTests: XCTestCase {
  func testBufferTypeAndInitializers() {
    XCTAssertEqual(CoChannel<Int>().bufferType, .unlimited)
    XCTAssertEqual(CoChannel<Int>(capacity: 3).bufferType, .buffered(capacity: 3))
    XCTAssertEqual(CoChannel<Int>(bufferType: .none).bufferType, .none)
    XCTAssertEqual(CoChannel<Int>(bufferType: .conflated).sender.bufferType, .conflated)
    XCTAssertEqual(CoChannel<Int>(capacity: 2).receiver.bufferType, .buffered(capacity: 2))
    XCTAssertEqual(CoChannel<Int>(capacity: 2).map { "\($0)" }.bufferType, .buffered(capacity: 2))
  }

  func testUnlimitedNeverWaits() {
    let channel = CoChannel<Int>()
    for value in 0..<1000 { XCTAssertTrue(channel.offer(value)) }
    XCTAssertEqual(channel.count, 1000)
    XCTAssertFalse(channel.isEmpty)
    coRun { for value in 1000..<1100 { try channel.awaitSend(value) } }
    for value in 0..<1100 { XCTAssertEqual(channel.poll(), value) }
    XCTAssertNil(channel.poll())
    XCTAssertTrue(channel.isEmpty)
    XCTAssertEqual(channel.count, 0)
  }

  func testBufferedWaitsWhenFull() {
    let channel = CoChannel<Int>(capacity: 2)
    XCTAssertTrue(channel.offer(1))
    XCTAssertTrue(channel.offer(2))
    XCTAssertFalse(channel.offer(3), "full")
    XCTAssertEqual(channel.count, 2)

    let queue = CoQueue()
    let sent = Box(false)
    queue.start {
      try channel.awaitSend(3)
      sent.value = true
    }
    queue.flush()
    XCTAssertFalse(sent.value, "suspended while full")
    XCTAssertEqual(channel.count, 3, "buffered + the waiting sender's element")
    XCTAssertEqual(channel.poll(), 1)
    queue.flush()
    XCTAssertTrue(sent.value, "resumed when a slot opened")
    XCTAssertEqual(channel.poll(), 2)
    XCTAssertEqual(channel.poll(), 3)
    XCTAssertNil(channel.poll())
  }

  func testBufferedCapacityZeroBehavesAsRendezvous() {
    let channel = CoChannel<Int>(capacity: 0)
    XCTAssertFalse(channel.offer(1))
    XCTAssertEqual(channel.count, 0)
  }

  func testRendezvousSenderWaitsForReceiver() {
    let channel = CoChannel<String>(bufferType: .none)
    XCTAssertFalse(channel.offer("no receiver"))
    XCTAssertTrue(channel.isEmpty)

    let queue = CoQueue()
    let sent = Box(false)
    queue.start {
      try channel.awaitSend("hello")
      sent.value = true
    }
    queue.flush()
    XCTAssertFalse(sent.value)
    XCTAssertEqual(channel.count, 1, "the waiting sender's element")
    XCTAssertEqual(channel.poll(), "hello")
    queue.flush()
    XCTAssertTrue(sent.value)
  }

  func testRendezvousOfferSucceedsWhenReceiverWaits() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let received = Box<Int?>(nil)
    queue.start { received.value = try channel.awaitReceive() }
    queue.flush()
    XCTAssertNil(received.value)
    XCTAssertTrue(channel.offer(5))
    queue.flush()
    XCTAssertEqual(received.value, 5)
    XCTAssertFalse(channel.offer(6))
  }

  func testRendezvousBetweenCoroutines() {
    let channel = CoChannel<Int>(bufferType: .none)
    let received = Recorder<Int>()
    let queue = DispatchQueue(label: "rendezvous")
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      for value in 0..<100 { try channel.awaitSend(value) }
      channel.close()
    }
    queue.startCoroutine {
      for value in channel.makeIterator() { received.append(value) }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(received.elements, Array(0..<100))
  }

  func testConflatedKeepsOnlyTheLatest() {
    let channel = CoChannel<Int>(bufferType: .conflated)
    XCTAssertTrue(channel.offer(1))
    XCTAssertTrue(channel.offer(2))
    coRun { try channel.awaitSend(3) }
    XCTAssertEqual(channel.count, 1)
    XCTAssertEqual(channel.poll(), 3)
    XCTAssertNil(channel.poll())
    XCTAssertTrue(channel.isEmpty)
  }

  func testConflatedHandsToWaitingReceiver() {
    let channel = CoChannel<Int>(bufferType: .conflated)
    let queue = CoQueue()
    let received = Box<Int?>(nil)
    queue.start { received.value = try channel.awaitReceive() }
    queue.flush()
    XCTAssertTrue(channel.offer(1))
    XCTAssertTrue(channel.offer(2))
    queue.flush()
    XCTAssertEqual(received.value, 1)
    XCTAssertEqual(channel.poll(), 2)
  }

  func testReceiveWaitsWhenEmptyAndReturnsAtOnceWhenReady() {
    let channel = CoChannel<Int>(capacity: 4)
    channel.offer(1)
    XCTAssertEqual(try channel.awaitReceive(), 1, "ready: works even outside a coroutine")
    XCTAssertThrowsError(try channel.awaitReceive()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertThrowsError(try CoChannel<Int>(bufferType: .none).awaitSend(1)) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }

    let queue = CoQueue()
    let received = Box<Int?>(nil)
    queue.start { received.value = try channel.awaitReceive() }
    queue.flush()
    XCTAssertNil(received.value)
    channel.offer(2)
    queue.flush()
    XCTAssertEqual(received.value, 2)
  }

  func testBufferedOnePingPongBetweenTwoCoroutinesOnOneQueue() {
    let ping = CoChannel<Int>(capacity: 1)
    let pong = CoChannel<Int>(capacity: 1)
    let queue = DispatchQueue(label: "ping-pong")
    let rounds = 10_000
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      for value in 0..<rounds {
        try ping.awaitSend(value)
        XCTAssertEqual(try pong.awaitReceive(), value)
      }
      ping.close()
    }
    queue.startCoroutine {
      for value in ping.makeIterator() { try pong.awaitSend(value) }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
  }

  func testSenderAndReceiverViews() {
    let (receiver, sender) = CoChannel<Int>(capacity: 2).pair
    XCTAssertTrue(sender.offer(1))
    XCTAssertEqual(sender.count, 1)
    XCTAssertEqual(receiver.count, 1)
    XCTAssertFalse(receiver.isEmpty)
    XCTAssertEqual(receiver.poll(), 1)
    XCTAssertTrue(sender.isEmpty)
    coRun {
      try sender.awaitSend(2)
      XCTAssertEqual(try receiver.awaitReceive(), 2)
    }
    XCTAssertTrue(sender.close())
    XCTAssertTrue(receiver.isClosed)
    XCTAssertFalse(receiver.isCanceled)
    receiver.cancel()
    XCTAssertTrue(sender.isCanceled)
  }
}
