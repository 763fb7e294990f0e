import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

/// A counter with no synchronisation of its own: only the `CoMutex` under test orders the
/// accesses (so ThreadSanitizer reports a race if the mutex fails to).
private final class UnguardedCounter: @unchecked Sendable {
  var value = 0
  var inside = 0
  var mostInside = 0
}

final class CoMutexTests: XCTestCase {
  private static let childVariable = "COVENANT_MUTEX_CHILD"

  /// Many coroutines on a concurrent queue, each incrementing a plain counter under the mutex
  /// with an `await` between the read and the write: the count is exact and the critical
  /// section never has two coroutines in it.
  func testContentionOnAConcurrentQueueCountsExactly() {
    let mutex = CoMutex()
    let counter = UnguardedCounter()
    let coroutines = 64
    let increments = TestScale.stress(200, sanitizerDivisor: 10)
    let queue = DispatchQueue(label: "mutex.concurrent", attributes: .concurrent)
    let group = DispatchGroup()
    for index in 0..<coroutines {
      group.enter()
      queue.startCoroutine {
        defer { group.leave() }
        for round in 0..<increments {
          try mutex.withLock {
            counter.inside += 1
            counter.mostInside = max(counter.mostInside, counter.inside)
            let seen = counter.value
            if (index + round) % 2 == 0 {
              try Coroutine.yield()
            } else {
              let reply = CoPromise<Int>()
              DispatchQueue.global().async { reply.success(1) }
              _ = try reply.await()
            }
            counter.value = seen + 1
            counter.inside -= 1
          }
        }
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
    XCTAssertEqual(counter.value, coroutines * increments)
    XCTAssertEqual(counter.mostInside, 1)
    XCTAssertFalse(mutex.isLocked)
  }

  /// The same on one serial queue: a lock that blocked its thread would deadlock here, since the
  /// holder can only continue on that same thread. The queue also keeps running other work
  /// while coroutines wait for the lock.
  func testWaitingBlocksNoThread() {
    let mutex = CoMutex()
    let counter = UnguardedCounter()
    let queue = DispatchQueue(label: "mutex.serial")
    let gate = CoPromise<Void>()
    let group = DispatchGroup()
    for _ in 0..<20 {
      group.enter()
      queue.startCoroutine {
        defer { group.leave() }
        try mutex.withLock {
          let seen = counter.value
          try gate.await()  // every other coroutine queues up behind this one
          counter.value = seen + 1
        }
      }
    }
    queue.sync {}  // all 20 have run up to the gate or the lock
    XCTAssertTrue(mutex.isLocked)
    let ranMeanwhile = DispatchSemaphore(value: 0)
    queue.async { ranMeanwhile.signal() }  // the queue is free although 19 coroutines wait
    XCTAssertEqual(ranMeanwhile.wait(timeout: .now() + 5), .success)
    gate.success(())
    XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(counter.value, 20)
  }

  /// Waiters get the lock in the order they asked for it; `unlock()` hands it to the first of
  /// them, so neither `tryLock()` nor a new `lock()` can take it first.
  func testWaitersGetTheLockInArrivalOrderWithoutBarging() {
    let scheduler = TestScheduler()
    let mutex = CoMutex()
    let order = Recorder<String>()
    scheduler.startCoroutine {
      try mutex.lock()
      try Coroutine.delay(.seconds(1))
      mutex.unlock()
      order.append("released; tryLock \(mutex.tryLock())")
      try mutex.lock()  // goes to the back of the queue
      order.append("holder again")
      mutex.unlock()
    }
    for index in 0..<5 {
      scheduler.startCoroutine {
        try mutex.withLock { order.append("waiter \(index)") }
      }
    }
    scheduler.run()
    XCTAssertEqual(order.elements, [])
    XCTAssertFalse(mutex.tryLock(), "busy")
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(
      order.elements,
      ["released; tryLock false"] + (0..<5).map { "waiter \($0)" } + ["holder again"])
    XCTAssertFalse(mutex.isLocked)
  }

  /// A waiter cancelled while waiting throws `CoroutineError.canceled` and never holds the lock;
  /// the lock passes to the next waiter.
  func testCancelledWaiterThrowsAndNeverTakesTheLock() {
    let scheduler = TestScheduler()
    let mutex = CoMutex()
    let scope = CoScope()
    let log = Recorder<String>()
    scheduler.startCoroutine {
      try mutex.lock()
      try Coroutine.delay(.seconds(1))
      mutex.unlock()
    }
    scheduler.startCoroutine(in: scope) {
      do {
        try mutex.lock()
        log.append("cancelled waiter got the lock")
        mutex.unlock()
      } catch {
        log.append("cancelled waiter: \(error)")
      }
    }
    scheduler.startCoroutine {
      try mutex.withLock { log.append("next waiter got the lock") }
    }
    scheduler.run()
    scope.cancel()
    scheduler.run()
    XCTAssertEqual(log.elements, ["cancelled waiter: \(CoroutineError.canceled)"])
    XCTAssertTrue(mutex.isLocked, "still held by the first coroutine")
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(log.elements.last, "next waiter got the lock")
    XCTAssertFalse(mutex.isLocked)
  }

  /// An uncontended lock succeeds in a cancelled coroutine (only waiting throws), and
  /// `withLock` releases the lock when its body throws.
  func testUncontendedLockInACancelledCoroutineAndWithLockRethrows() throws {
    let mutex = CoMutex()
    struct Failure: Error {}
    let outcome = try runCoroutine(on: DispatchQueue.global()) { () -> String in
      do { _ = try mutex.withLock { () throws -> Int in throw Failure() } } catch is Failure {}
      XCTAssertFalse(mutex.isLocked)
      return "ok"
    }
    XCTAssertEqual(outcome, "ok")
    let scope = CoScope()
    let done = DispatchSemaphore(value: 0)
    let log = Recorder<String>()
    DispatchQueue.global().startCoroutine(in: scope) {
      defer { done.signal() }
      scope.cancel()
      XCTAssertTrue(Coroutine.isCanceled)
      do {
        try mutex.lock()
        log.append("locked while cancelled")
        mutex.unlock()
      } catch {
        log.append("\(error)")
      }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(log.elements, ["locked while cancelled"])
  }

  /// Outside coroutines: a free mutex is taken, a held one makes `lock()` throw
  /// `calledOutsideCoroutine` rather than wait; code outside coroutines can hand the lock to a
  /// waiting coroutine.
  func testOutsideCoroutinesFollowsTheRuleOfAwait() {
    let mutex = CoMutex()
    XCTAssertNoThrow(try mutex.lock())
    XCTAssertTrue(mutex.isLocked)
    XCTAssertFalse(mutex.tryLock())
    XCTAssertThrowsError(try mutex.lock()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    let got = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine {
      try mutex.lock()
      got.signal()
      mutex.unlock()
    }
    XCTAssertEqual(got.wait(timeout: .now() + 0.05), .timedOut, "the coroutine waits")
    mutex.unlock()
    XCTAssertEqual(got.wait(timeout: .now() + 5), .success)
  }

  func testUnlockingAFreeMutexIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "CoMutexTests/testChildMisuse", variable: Self.childVariable, value: "unlockFree",
      message: "CoMutex.unlock(): the mutex is not held by the caller")
  }

  func testUnlockingAnotherCoroutinesMutexIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "CoMutexTests/testChildMisuse", variable: Self.childVariable, value: "unlockOthers",
      message: "CoMutex.unlock(): the mutex is not held by the caller")
  }

  func testChildMisuse() throws {
    let mutex = CoMutex()
    switch ProcessInfo.processInfo.environment[Self.childVariable] {
    case "unlockFree":
      mutex.unlock()
    case "unlockOthers":
      let queue = DispatchQueue(label: "mutex.misuse")
      let never = CoPromise<Int>()
      // The holder stays suspended, holding the lock: a coroutine that ended while holding it
      // could have its address (which is how the mutex knows its holder) reused by the next.
      queue.startCoroutine {
        try mutex.lock()
        _ = try never.await()
      }
      queue.sync {}
      let done = DispatchSemaphore(value: 0)
      queue.startCoroutine {
        mutex.unlock()
        done.signal()
      }
      _ = done.wait(timeout: .now() + 5)
    default:
      return  // only meaningful in the child process spawned above
    }
    XCTFail("the child should have crashed")
  }
}
