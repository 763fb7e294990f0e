import Covenant
import Dispatch
import Foundation
import XCTest

/// The non-suspending operations: futures, callbacks, `map`, iteration.
final class CoChannelOperationTests: XCTestCase {
  func testReceiveFuture() {
    let channel = CoChannel<Int>()
    channel.offer(1)
    XCTAssertEqual(try channel.receiveFuture().result?.get(), 1, "ready: complete at once")
    let pending = channel.receiveFuture()
    XCTAssertNil(pending.result)
    channel.offer(2)
    XCTAssertEqual(try pending.result?.get(), 2)
    let closed = channel.receiveFuture()
    channel.close()
    XCTAssertThrowsError(try closed.result?.get()) { XCTAssertTrue(isChannelError($0, .closed)) }
  }

  func testCancelledReceiveFutureConsumesNothing() {
    let channel = CoChannel<Int>(bufferType: .none)
    let abandoned = channel.receiveFuture()
    let next = channel.receiveFuture()
    abandoned.cancel()
    XCTAssertTrue(channel.offer(5))
    XCTAssertTrue(abandoned.isCanceled)
    XCTAssertEqual(try next.result?.get(), 5)
    XCTAssertFalse(channel.offer(6), "the cancelled future left no waiter")
  }

  func testWhenReceive() {
    let channel = CoChannel<String>()
    let results = Recorder<String>()
    channel.offer("ready")
    channel.whenReceive { results.append((try? $0.get()) ?? "error") }
    channel.whenReceive { results.append((try? $0.get()) ?? "error") }
    XCTAssertEqual(results.elements, ["ready"])
    channel.offer("later")
    XCTAssertEqual(results.elements, ["ready", "later"])
    channel.whenReceive {
      if case .failure(let error) = $0 { results.append("\(error)") }
    }
    channel.close()
    XCTAssertEqual(results.elements, ["ready", "later", "\(CoChannelError.closed)"])
  }

  func testSendFuture() {
    let channel = CoChannel<Int>(capacity: 1)
    let first = CoPromise<Int>()
    let second = CoPromise<Int>()
    let failing = CoPromise<Int>()
    channel.sendFuture(first)
    channel.sendFuture(failing)
    channel.sendFuture(second)
    channel.sendFuture(CoFuture(result: .success(0)))
    XCTAssertEqual(channel.count, 1)
    failing.fail(TestError())
    first.success(1)
    second.success(2)
    XCTAssertEqual(channel.count, 3, "values without room wait in line")
    XCTAssertEqual(channel.poll(), 0)
    XCTAssertEqual(channel.poll(), 1)
    XCTAssertEqual(channel.poll(), 2)
    XCTAssertNil(channel.poll())
  }

  func testSendFutureToWaitingReceiverAndAfterClose() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let received = Box<Int?>(nil)
    queue.start { received.value = try channel.awaitReceive() }
    queue.flush()
    let promise = CoPromise<Int>()
    channel.sender.sendFuture(promise)
    promise.success(9)
    queue.flush()
    XCTAssertEqual(received.value, 9)

    let late = CoPromise<Int>()
    channel.sendFuture(late)
    channel.close()
    late.success(10)
    XCTAssertNil(channel.poll(), "dropped after close")
  }

  func testMap() {
    let channel = CoChannel<Int>()
    let strings = channel.map { "#\($0)" }
    let lengths = strings.map { $0.count }
    channel.offer(1)
    channel.offer(22)
    channel.offer(333)
    channel.offer(4444)
    XCTAssertEqual(strings.count, 4)
    XCTAssertEqual(strings.poll(), "#1")
    XCTAssertEqual(lengths.poll(), 3)
    XCTAssertEqual(try strings.receiveFuture().result?.get(), "#333")
    let viaCallback = Box<String?>(nil)
    strings.whenReceive { viaCallback.value = try? $0.get() }
    XCTAssertEqual(viaCallback.value, "#4444")
    channel.offer(5)
    coRun { XCTAssertEqual(try lengths.awaitReceive(), 2) }
    channel.offer(6)
    channel.close()
    coRun { XCTAssertEqual(Array(strings.makeIterator()), ["#6"]) }
    XCTAssertTrue(lengths.isClosed)
    let completed = Box(false)
    lengths.whenComplete { completed.value = true }
    XCTAssertTrue(completed.value)
    lengths.cancel()
    XCTAssertTrue(channel.isCanceled)
  }

  func testIteratorInsideCoroutineWaitsForElements() {
    let channel = CoChannel<Int>(capacity: 1)
    let collected = Recorder<Int>()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine {
      for value in channel.makeIterator() { collected.append(value) }
      done.signal()
    }
    DispatchQueue.global().startCoroutine {
      for value in 0..<20 { try channel.awaitSend(value) }
      channel.close()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(collected.elements, Array(0..<20))
  }

  func testSeedProducerConsumer() {
    // The guide's example: a producer and a consumer on one buffered(1) channel.
    let channel = CoChannel<Int>(capacity: 1)
    let collected = Recorder<Int>()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine {
      for i in 0..<100 { try channel.awaitSend(i) }
      channel.close()
    }
    DispatchQueue.global().startCoroutine {
      for i in channel.makeIterator() { collected.append(i) }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(collected.elements, Array(0..<100))
  }

  func testChannelIsReleasedWhenNothingUsesIt() {
    weak var weakChannel: CoChannel<Int>?
    weak var weakFuture: CoFuture<Int>?
    do {
      let channel = CoChannel<Int>(bufferType: .none)
      weakChannel = channel
      let future = channel.receiveFuture()
      weakFuture = future
      channel.sendFuture(CoPromise<Int>())
      coRun {
        try channel.awaitSend(1)  // received by the future
      }
    }
    waitUntil { weakChannel == nil }  // the coroutine drops its body just after signalling
    XCTAssertNil(weakFuture)
  }
}
