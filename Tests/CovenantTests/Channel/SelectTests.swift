import Covenant
import Dispatch
import Foundation
import XCTest

final class SelectTests: XCTestCase {
  func testReadyCaseWinsFirstInOrder() {
    let a = CoChannel<Int>()
    let b = CoChannel<String>()
    b.offer("b")
    a.offer(1)
    coRun {
      let first: String = try CoChannel.select {
        $0.onReceive(a) { "a\($0)" }
        $0.onReceive(b) { "b:\($0)" }
      }
      XCTAssertEqual(first, "a1")
      let second: String = try CoChannel.select {
        $0.onReceive(a) { "a\($0)" }
        $0.onReceive(b) { "b:\($0)" }
      }
      XCTAssertEqual(second, "b:b")
    }
    XCTAssertTrue(a.isEmpty)
    XCTAssertTrue(b.isEmpty)
  }

  func testDefaultWhenNothingIsReadyEvenOutsideACoroutine() throws {
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(capacity: 1)
    b.offer(0)
    let result: String = try CoChannel.select {
      $0.onReceive(a) { "a\($0)" }
      $0.onSend(b, 1) { "sent" }
      $0.onDefault { "default" }
    }
    XCTAssertEqual(result, "default")
    XCTAssertFalse(a.offer(1), "no receiver left on a")
    XCTAssertEqual(b.poll(), 0)
    XCTAssertNil(b.poll(), "the send case did not send")

    let ready: String = try CoChannel.select {
      $0.onSend(b, 2) { "sent" }
      $0.onDefault { "default" }
    }
    XCTAssertEqual(ready, "sent")
    XCTAssertEqual(b.poll(), 2)
  }

  func testWithoutDefaultOutsideCoroutineThrows() {
    let a = CoChannel<Int>()
    XCTAssertThrowsError(try CoChannel.select { $0.onReceive(a) { _ in } }) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertFalse(a.offer(1) == false)
    XCTAssertEqual(a.poll(), 1, "no waiter left behind")
  }

  func testWaitsForTheFirstCaseToComplete() {
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(bufferType: .none)
    let c = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let result = Box<String>("")
    queue.start {
      result.value = try CoChannel.select {
        $0.onReceive(a) { "a\($0)" }
        $0.onReceive(b) { "b\($0)" }
        $0.onSend(c, 3) { "sent c" }
      }
    }
    queue.flush()
    XCTAssertEqual(result.value, "")
    XCTAssertEqual(c.count, 1, "the send case waits on c")
    XCTAssertTrue(b.offer(2))
    queue.flush()
    XCTAssertEqual(result.value, "b2")
    // The losers left nothing behind.
    XCTAssertFalse(a.offer(1), "no receiver left on a")
    XCTAssertNil(c.poll(), "the send case did not send")
    XCTAssertEqual(c.count, 0)
  }

  func testSendCaseCompletesWhenAReceiverComes() {
    let a = CoChannel<Int>(bufferType: .none)
    let out = CoChannel<String>(bufferType: .none)
    let queue = CoQueue()
    let result = Box<String>("")
    queue.start {
      result.value = try CoChannel.select {
        $0.onReceive(a) { "a\($0)" }
        $0.onSend(out.sender, "x") { "sent" }
      }
    }
    queue.flush()
    XCTAssertEqual(out.poll(), "x")
    queue.flush()
    XCTAssertEqual(result.value, "sent")
    XCTAssertFalse(a.offer(1))
  }

  func testSelectOnMappedReceiverAndVoidSend() {
    let numbers = CoChannel<Int>()
    let out = CoChannel<Int>(capacity: 1)
    numbers.offer(4)
    coRun {
      let text: String = try CoChannel.select {
        $0.onReceive(numbers.map { $0 * 10 }) { "got \($0)" }
      }
      XCTAssertEqual(text, "got 40")
      try CoChannel.select { $0.onSend(out, 1) }
    }
    XCTAssertEqual(out.poll(), 1)
  }

  func testClosedAndCancelledChannelsAreReady() {
    let closed = CoChannel<Int>()
    closed.close()
    let canceled = CoChannel<Int>()
    canceled.cancel()
    let pending = CoChannel<Int>(bufferType: .none)
    coRun {
      XCTAssertThrowsError(
        try CoChannel.select {
          $0.onReceive(pending) { _ in }
          $0.onReceive(closed) { _ in }
        }
      ) { XCTAssertTrue(isChannelError($0, .closed)) }
      let result: Result<Int, CoChannelError> = try CoChannel.select {
        $0.onReceive(pending) { .success($0) }
        $0.onReceiveResult(canceled) { $0 }
      }
      XCTAssertEqual(result, .failure(.canceled))
      XCTAssertThrowsError(try CoChannel.select { $0.onSend(closed, 1) }) {
        XCTAssertTrue(isChannelError($0, .closed))
      }
    }
    XCTAssertFalse(pending.offer(1), "no receiver left on the pending channel")
  }

  func testClosingWakesAWaitingSelect() {
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let result = Box<String>("")
    queue.start {
      result.value = try CoChannel.select {
        $0.onReceive(a) { "a\($0)" }
        $0.onReceiveResult(b) { "b \($0)" }
      }
    }
    queue.flush()
    b.close()
    queue.flush()
    XCTAssertEqual(result.value, "b \(Result<Int, CoChannelError>.failure(.closed))")
    XCTAssertFalse(a.offer(1))
  }

  func testBodyErrorsAreRethrown() {
    let a = CoChannel<Int>()
    a.offer(1)
    coRun {
      XCTAssertThrowsError(try CoChannel.select { $0.onReceive(a) { _ in throw TestError(5) } }) {
        XCTAssertEqual($0 as? TestError, TestError(5))
      }
    }
  }

  func testCancellingTheSelectingCoroutineLeavesNoWaiter() {
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(bufferType: .none)
    let scope = CoScope()
    let queue = CoQueue()
    let outcome = Box<String>("")
    queue.queue.startCoroutine(in: scope) {
      do {
        try CoChannel.select {
          $0.onReceive(a) { _ in }
          $0.onSend(b, 1) {}
        }
        outcome.value = "completed"
      } catch { outcome.value = "\(error)" }
    }
    queue.flush()
    scope.cancel()
    queue.flush()
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
    XCTAssertFalse(a.offer(1))
    XCTAssertNil(b.poll())
    XCTAssertEqual(b.count, 0)
  }

  func testSameChannelInTwoCases() {
    let channel = CoChannel<Int>(capacity: 1)
    coRun {
      let first: String = try CoChannel.select {
        $0.onReceive(channel) { "received \($0)" }
        $0.onSend(channel, 1) { "sent" }
      }
      XCTAssertEqual(first, "sent")
      let second: String = try CoChannel.select {
        $0.onReceive(channel) { "received \($0)" }
        $0.onSend(channel, 2) { "sent" }
      }
      XCTAssertEqual(second, "received 1")
    }
  }

  func testSameRendezvousChannelInTwoCasesWaitsForAPartner() {
    // A rendezvous channel: the select's own receive waiter must not count as a partner of its
    // send case (and the other way round), else the send case "delivers" to it, fails, and the
    // select wakes itself again and again, keeping its thread busy instead of waiting.
    let channel = CoChannel<Int>(bufferType: .none)
    @Sendable func select() throws -> String {
      try CoChannel.select {
        $0.onReceive(channel) { "received \($0)" }
        $0.onSend(channel, 1) { "sent" }
      }
    }
    // Alone, a select waits — and completes when a partner coroutine comes, either way round.
    for partnerSends in [true, false] {
      let queue = DispatchQueue(label: "selecting")
      let outcome = Box("")
      let done = DispatchSemaphore(value: 0)
      queue.startCoroutine {
        outcome.value = try select()
        done.signal()
      }
      XCTAssertTrue(becomesIdle(queue), "the select keeps waking itself instead of waiting")
      XCTAssertEqual(outcome.value, "", "the select waits for a partner")
      let partner = Box("")
      DispatchQueue.global().startCoroutine {
        if partnerSends {
          try channel.awaitSend(7)
          partner.value = "sent"
        } else {
          partner.value = "received \(try channel.awaitReceive())"
        }
        done.signal()
      }
      XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
      XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
      XCTAssertEqual(outcome.value, partnerSends ? "received 7" : "sent")
      XCTAssertEqual(partner.value, partnerSends ? "sent" : "received 1")
      XCTAssertNil(channel.poll(), "no waiter left behind")
      XCTAssertFalse(channel.offer(0), "no waiter left behind")
    }
    // Two such selects pair with each other (one receives what the other sends).
    let queue = DispatchQueue(label: "two-selects")
    let outcomes = Locked([String]())
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<2 {
      queue.startCoroutine {
        let outcome = try select()
        outcomes.withLock { $0.append(outcome) }
        done.signal()
      }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(outcomes.withLock { $0.sorted() }, ["received 1", "sent"])
  }

  /// Whether `queue` gets round to a new task soon: not if a coroutine keeps its thread busy.
  private func becomesIdle(_ queue: DispatchQueue) -> Bool {
    let idle = DispatchSemaphore(value: 0)
    queue.async { idle.signal() }
    return idle.wait(timeout: .now() + 10) == .success
  }

  func testManyWaitersLeavingTheMiddleOfAQueue() {
    // 100,000 waiters in one channel's queue: 1,000 coroutines, each selecting with 100 cases
    // on a shared channel and one on its own. They are resolved through their own channels,
    // odd ones first, so that most leave the middle of the shared queue: each waiter leaves in
    // O(1), not O(queue length) (that was quadratic: minutes). A receiver waiting on the shared
    // channel from before keeps its place throughout.
    let selects = 1_000
    let casesEach = 100
    let shared = CoChannel<Int>(bufferType: .none)
    let own = (0..<selects).map { _ in CoChannel<Int>(bufferType: .none) }
    let queue = CoQueue()
    let first = Box(-1)
    queue.start { first.value = try shared.awaitReceive() }
    let resolved = DispatchSemaphore(value: 0)
    for index in 0..<selects {
      queue.start {
        let value: Int = try CoChannel.select {
          for _ in 0..<casesEach { $0.onReceive(shared) { _ in -1 } }
          $0.onReceive(own[index]) { $0 }
        }
        XCTAssertEqual(value, index)
        resolved.signal()
      }
    }
    queue.flush()
    XCTAssertEqual(shared.count, 0)
    for index in Array(stride(from: 1, to: selects, by: 2))
      + Array(stride(from: 0, to: selects, by: 2))
    {
      XCTAssertTrue(own[index].offer(index))
    }
    // A deadline rather than `flush()`, so that a quadratic withdrawal fails instead of hanging.
    let deadline = DispatchTime.now() + 30
    for _ in 0..<selects {
      guard resolved.wait(timeout: deadline) == .success else {
        return XCTFail("the waiters took more than 30 s to leave the queue")
      }
    }
    queue.flush()
    XCTAssertEqual(first.value, -1, "the first receiver still waits")
    XCTAssertTrue(shared.offer(42), "…at the front of the shared queue")
    queue.flush()
    XCTAssertEqual(first.value, 42)
    XCTAssertFalse(shared.offer(0), "no waiter left behind")
  }

  func testACancelledSenderInTheMiddleIsNeitherCountedNorReceived() {
    // The middle one of three waiting senders is cancelled: it leaves a tombstone in the queue,
    // which `count`, receiving and completion all pass over.
    let channel = CoChannel<Int>(bufferType: .none)
    let scopes = (0..<3).map { _ in CoScope() }
    let outcomes = Locked([String]())
    for (index, scope) in scopes.enumerated() {
      DispatchQueue.global().startCoroutine(in: scope) {
        do {
          try channel.awaitSend(index)
          outcomes.withLock { $0.append("sent \(index)") }
        } catch {
          outcomes.withLock { $0.append("\(index): \(error)") }
        }
      }
      waitUntil { channel.count == index + 1 }
    }
    scopes[1].cancel()
    waitUntil { outcomes.withLock { $0.count } == 1 }
    XCTAssertEqual(channel.count, 2)
    let completed = DispatchSemaphore(value: 0)
    channel.whenComplete { completed.signal() }
    channel.close()
    XCTAssertEqual(channel.poll(), 0)
    XCTAssertEqual(channel.poll(), 2)
    XCTAssertEqual(channel.count, 0)
    XCTAssertEqual(completed.wait(timeout: .now() + 10), .success, "drained: complete")
    waitUntil { outcomes.withLock { $0.count } == 3 }
    XCTAssertEqual(
      outcomes.withLock { $0.filter { $0.hasPrefix("sent") }.sorted() }, ["sent 0", "sent 2"])
    // A scope that goes cancels its coroutine, and -O may end `scopes`' lifetime at its last use.
    withExtendedLifetime(scopes) {}
  }

  func testSelectsOnBothSidesOfRendezvousChannels() {
    // A selecting sender meets a selecting receiver.
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(bufferType: .none)
    let queue = DispatchQueue(label: "both-sides", attributes: .concurrent)
    let rounds = TestScale.stress(2_000)
    let received = Locked([Int]())
    let group = DispatchGroup()
    group.enter()
    queue.startCoroutine {
      defer { group.leave() }
      for value in 0..<rounds {
        try CoChannel.select {
          $0.onSend(a, value)
          $0.onSend(b, value)
        }
      }
    }
    group.enter()
    queue.startCoroutine {
      defer { group.leave() }
      for _ in 0..<rounds {
        let value: Int = try CoChannel.select {
          $0.onReceive(b) { $0 }
          $0.onReceive(a) { $0 }
        }
        received.withLock { $0.append(value) }
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
    XCTAssertEqual(received.withLock { $0 }, Array(0..<rounds))
  }

  func testRacingProducersExactlyOneCasePerRound() {
    // Two producers race on two channels, a third channel is never ready; each round of the
    // consumer's select takes exactly one element, and none is lost or duplicated.
    let rounds = TestScale.stress(10_000)
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(capacity: 1)
    let never = CoChannel<Int>(bufferType: .none)
    let queue = DispatchQueue(label: "race", attributes: .concurrent)
    let fired = Locked([Int](repeating: 0, count: rounds))
    let bodiesRun = Locked(0)
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      for value in stride(from: 0, to: rounds, by: 2) { try a.awaitSend(value) }
    }
    queue.startCoroutine {
      for value in stride(from: 1, to: rounds, by: 2) { try b.awaitSend(value) }
    }
    queue.startCoroutine {
      for _ in 0..<rounds {
        let value: Int = try CoChannel.select {
          $0.onReceive(a) { value in
            bodiesRun.withLock { $0 += 1 }
            return value
          }
          $0.onReceive(b) { value in
            bodiesRun.withLock { $0 += 1 }
            return value
          }
          $0.onReceive(never) { _ in
            XCTFail("never ready")
            return -1
          }
        }
        fired.withLock { $0[value] += 1 }
      }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
    XCTAssertEqual(bodiesRun.withLock { $0 }, rounds, "exactly one body per round")
    XCTAssertEqual(fired.withLock { $0.filter { $0 != 1 }.count }, 0, "each element exactly once")
    XCTAssertNil(a.poll())
    XCTAssertNil(b.poll())
    XCTAssertFalse(never.offer(0), "no waiter left behind")
  }

  func testCompetingSelectsAndPlainReceivers() {
    // Two selecting consumers and one plain consumer compete for two producers' elements.
    let perProducer = TestScale.stress(5_000)
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<Int>(capacity: 4)
    let queue = DispatchQueue(label: "compete", attributes: .concurrent)
    let seen = Locked([UInt8](repeating: 0, count: 2 * perProducer))
    let producersLeft = Locked(2)
    let group = DispatchGroup()
    for (channel, base) in [(a, 0), (b, perProducer)] {
      queue.startCoroutine {
        for offset in 0..<perProducer { try channel.awaitSend(base + offset) }
        if producersLeft.withLock({ left -> Bool in
          left -= 1
          return left == 0
        }) {
          a.close()
          b.close()
        }
      }
    }
    for _ in 0..<2 {
      group.enter()
      queue.startCoroutine {
        defer { group.leave() }
        var open = (a: true, b: true)
        while open.a || open.b {
          let value: Int? = try CoChannel.select { select in
            if open.a {
              select.onReceiveResult(a) { result in
                if case .success(let value) = result { return value }
                open.a = false
                return nil
              }
            }
            if open.b {
              select.onReceiveResult(b) { result in
                if case .success(let value) = result { return value }
                open.b = false
                return nil
              }
            }
          }
          if let value { seen.withLock { $0[value] &+= 1 } }
        }
      }
    }
    group.enter()
    queue.startCoroutine {
      defer { group.leave() }
      for value in b.makeIterator() { seen.withLock { $0[value] &+= 1 } }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
    XCTAssertEqual(seen.withLock { $0.filter { $0 != 1 }.count }, 0)
  }
}
