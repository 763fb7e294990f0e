import Covenant
import CovenantTesting
import Foundation
import XCTest

private enum CounterMessage: Sendable {
  case increment
  case add(Int)
  case get(CoPromise<Int>)
}

private struct ActorTestError: Error, Equatable {}

final class ActorTests: XCTestCase {
  /// The README example: 100,000 increments from all cores, an exact count.
  func testCounterUnderConcurrentSendersCountsExactly() throws {
    let counter = DispatchQueue.global().actor(of: CounterMessage.self) { mailbox in
      var count = 0
      for message in mailbox.makeIterator() {
        switch message {
        case .increment: count += 1
        case .add(let n): count += n
        case .get(let reply): reply.success(count)
        }
      }
    }
    let increments = TestScale.stress(100_000)
    DispatchQueue.concurrentPerform(iterations: increments) { _ in
      counter.offer(.increment)
    }
    XCTAssertEqual(try wait(for: counter.ask { .get($0) }, timeout: 20), increments)
    counter.close()
  }

  func testMessagesAreProcessedInOrder() throws {
    let seen = Box<[Int]>([])
    let done = CoPromise<Void>()
    let actor = DispatchQueue.global().actor(of: Int.self) { mailbox in
      for value in mailbox.makeIterator() { seen.value.append(value) }
      done.success()
    }
    for value in 0..<1_000 { XCTAssertTrue(actor.offer(value)) }
    actor.close()
    try wait(for: done, timeout: 10)
    XCTAssertEqual(seen.value, Array(0..<1_000))
  }

  func testStateIsConfinedToTheActorsScheduler() throws {
    let (queue, key) = DispatchQueue.tagged("actor-home")
    let labels = Box<Set<String?>>([])
    let done = CoPromise<Void>()
    let actor = queue.actor(of: Int.self) { mailbox in
      for _ in mailbox.makeIterator() { labels.value.insert(DispatchQueue.getSpecific(key: key)) }
      done.success()
    }
    DispatchQueue.concurrentPerform(iterations: 100) { actor.offer($0) }
    actor.close()
    try wait(for: done, timeout: 10)
    XCTAssertEqual(labels.value, ["actor-home"])
  }

  func testCloseDrainsTheMailboxThenEnds() throws {
    let processed = Box<[Int]>([])
    let ended = CoPromise<Void>()
    let gate = CoPromise<Void>()
    let actor = DispatchQueue.global().actor(of: Int.self) { mailbox in
      for value in mailbox.makeIterator() {
        try gate.await()  // hold the first message until everything is sent and closed
        processed.value.append(value)
      }
      ended.success()
    }
    for value in 1...5 { actor.offer(value) }
    XCTAssertTrue(actor.close())
    XCTAssertFalse(actor.offer(6), "a closed mailbox takes nothing more")
    gate.success()
    try wait(for: ended, timeout: 10)
    XCTAssertEqual(processed.value, [1, 2, 3, 4, 5])
  }

  func testCancelEndsTheActorAtOnce() throws {
    let processed = Box<[Int]>([])
    let ended = CoPromise<String>()
    let started = CoPromise<Void>()
    let actor = DispatchQueue.global().actor(of: Int.self) { mailbox in
      defer { ended.success("ended") }
      for value in mailbox.makeIterator() {
        started.success()
        processed.value.append(value)
        // An await in a handler is interrupted too.
        try CoPromise<Void>().await()
      }
    }
    for value in 1...5 { actor.offer(value) }
    try wait(for: started, timeout: 10)
    actor.cancel()
    XCTAssertEqual(try wait(for: ended, timeout: 10), "ended")
    XCTAssertEqual(processed.value, [1], "buffered messages are dropped")
    XCTAssertTrue(actor.isCanceled)
    XCTAssertFalse(actor.offer(7))
  }

  func testAskRepliesWithAFuture() throws {
    let account = DispatchQueue.global().actor(of: CounterMessage.self) { mailbox in
      var balance = 0
      for message in mailbox.makeIterator() {
        switch message {
        case .increment: balance += 1
        case .add(let amount): balance += amount
        case .get(let reply): reply.success(balance)
        }
      }
    }
    account.offer(.add(40))
    account.offer(.add(2))
    let balance = try runCoroutine(on: DispatchQueue.global()) {
      try account.ask { .get($0) }.await()
    }
    XCTAssertEqual(balance, 42)
    let viaCaseName: CoFuture<Int> = account.ask(CounterMessage.get)
    XCTAssertEqual(try wait(for: viaCaseName, timeout: 10), 42)
    account.close()
    XCTAssertThrowsError(try wait(for: account.ask { CounterMessage.get($0) }, timeout: 10)) {
      XCTAssertEqual($0 as? CoChannelError, .closed)
    }
  }

  func testAskOnAFullBoundedMailboxWaitsItsTurn() throws {
    let gate = CoPromise<Void>()
    let actor = DispatchQueue.global().actor(
      of: CounterMessage.self, bufferType: .buffered(capacity: 1)
    ) {
      mailbox in
      var count = 0
      for message in mailbox.makeIterator() {
        try gate.await()
        switch message {
        case .increment: count += 1
        case .add(let n): count += n
        case .get(let reply): reply.success(count)
        }
      }
    }
    actor.offer(.increment)  // taken by the actor, which waits at the gate
    Thread.sleep(forTimeInterval: 0.02)
    actor.offer(.increment)  // fills the buffer
    let outside = actor.ask { .get($0) }  // no room: waits in line
    let inside = DispatchQueue.global().coroutineFuture {
      try actor.ask { .get($0) }.await()  // no room: awaitSend
    }
    gate.success()
    XCTAssertEqual(try wait(for: outside, timeout: 10), 2)
    XCTAssertEqual(try wait(for: inside, timeout: 10), 2)
    actor.close()
  }

  func testBodyThatEndsOnItsOwnCancelsTheMailbox() throws {
    let ended = CoPromise<Void>()
    let actor = DispatchQueue.global().actor(of: Int.self) { mailbox in
      defer { ended.success() }
      _ = try mailbox.awaitReceive()
      throw ActorTestError()
    }
    actor.offer(1)
    try wait(for: ended, timeout: 10)
    // The mailbox is cancelled right after the body ends.
    let deadline = Date(timeIntervalSinceNow: 5)
    while !actor.isCanceled && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    XCTAssertTrue(actor.isCanceled)
    XCTAssertFalse(actor.offer(2))
  }

  func testSendingFromCoroutinesWithAwaitSend() throws {
    let counter = DispatchQueue.global().actor(
      of: CounterMessage.self, bufferType: .buffered(capacity: 4)
    ) {
      mailbox in
      var count = 0
      for message in mailbox.makeIterator() {
        switch message {
        case .increment: count += 1
        case .add(let n): count += n
        case .get(let reply): reply.success(count)
        }
      }
    }
    let senders = (0..<8).map { _ in
      DispatchQueue.global().coroutineFuture {
        for _ in 0..<500 { try counter.awaitSend(.increment) }
      }
    }
    for sender in senders { try wait(for: sender, timeout: 20) }
    XCTAssertEqual(try wait(for: counter.ask { .get($0) }, timeout: 10), 4_000)
    counter.close()
  }
}
