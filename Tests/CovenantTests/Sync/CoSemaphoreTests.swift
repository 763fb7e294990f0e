import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

final class CoSemaphoreTests: XCTestCase {
  private static let childVariable = "COVENANT_SEMAPHORE_CHILD"

  /// `withPermit` bounds how many coroutines are inside at once, on a concurrent queue, with
  /// awaits inside; the bound is reached and every permit comes back.
  func testWithPermitBoundsConcurrency() {
    let permits = CoSemaphore(value: 3)
    let inside = Locked((now: 0, most: 0, done: 0))
    let queue = DispatchQueue(label: "semaphore.concurrent", attributes: .concurrent)
    let group = DispatchGroup()
    let coroutines = TestScale.stress(200, sanitizerDivisor: 4)
    let full = CoPromise<Void>()  // fulfilled once three are inside at once
    for _ in 0..<coroutines {
      group.enter()
      queue.startCoroutine {
        defer { group.leave() }
        try permits.withPermit {
          let now = inside.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
            return $0.now
          }
          if now == 3 { full.success(()) }
          try full.await()
          try Coroutine.delay(.microseconds(100))
          inside.withLock {
            $0.now -= 1
            $0.done += 1
          }
        }
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
    let final = inside.withLock { $0 }
    XCTAssertEqual(final.done, coroutines)
    XCTAssertEqual(final.most, 3)
    XCTAssertEqual(permits.availablePermits, 3)
  }

  /// Waiters are served first come, first served; `signal()` hands its permit to the first of
  /// them, so `tryWait()` cannot take it meanwhile.
  func testPermitsGoToWaitersInArrivalOrder() {
    let scheduler = TestScheduler()
    let semaphore = CoSemaphore(value: 0)
    let order = Recorder<Int>()
    for index in 0..<6 {
      scheduler.startCoroutine {
        try semaphore.wait()
        order.append(index)
      }
    }
    scheduler.run()
    for round in 0..<3 {
      semaphore.signal()
      semaphore.signal()
      XCTAssertFalse(semaphore.tryWait(), "both permits were handed to waiters")
      scheduler.run()
      XCTAssertEqual(order.elements, Array(0..<(2 * round + 2)))
    }
    semaphore.signal()
    XCTAssertEqual(semaphore.availablePermits, 1)
    XCTAssertTrue(semaphore.tryWait())
    XCTAssertEqual(semaphore.availablePermits, 0)
  }

  /// A timed wait that expires throws `CoFutureError.timeout` and takes nothing: the next signal
  /// goes to the waiter behind it. One that is answered in time cancels its timer.
  func testTimedWaitTakesNothingWhenItExpires() {
    let scheduler = TestScheduler()
    let semaphore = CoSemaphore(value: 0)
    let log = Recorder<String>()
    scheduler.startCoroutine {
      do {
        try semaphore.wait(timeout: .seconds(5))
        log.append("first got a permit")
      } catch {
        log.append("first: \(error)")
      }
    }
    scheduler.startCoroutine {
      try semaphore.wait(timeout: .seconds(60))
      log.append("second got a permit")
    }
    scheduler.run()
    XCTAssertEqual(scheduler.pendingTaskCount, 2, "two timers")
    scheduler.advance(by: .seconds(5))
    XCTAssertEqual(log.elements, ["first: \(CoFutureError.timeout)"])
    semaphore.signal()
    scheduler.run()
    XCTAssertEqual(log.elements.last, "second got a permit")
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "the answered wait's timer was cancelled")
    XCTAssertEqual(semaphore.availablePermits, 0)
  }

  /// Timeouts, cancels and signals racing on real threads: every permit is accounted for.
  func testTimeoutsCancelsAndSignalsRacingKeepEveryPermit() {
    let semaphore = CoSemaphore(value: 0)
    let acquired = Locked(0)
    let queue = DispatchQueue(label: "semaphore.race", attributes: .concurrent)
    let waiters = TestScale.stress(2_000, sanitizerDivisor: 10)
    let scope = CoScope()
    let others = CoScope()  // never cancelled: for `join`
    for index in 0..<waiters {
      queue.startCoroutine(in: index % 3 == 0 ? scope : others) {
        do {
          try semaphore.wait(timeout: .microseconds(index % 7 * 100))
          acquired.withLock { $0 += 1 }
        } catch {}
      }
    }
    let signals = waiters / 2
    for index in 0..<signals {
      semaphore.signal()
      if index == signals / 2 { scope.cancel() }
    }
    // Every coroutine has ended, the cancelled ones that had not started without running.
    let joined = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      try? scope.join()
      try? others.join()
      joined.signal()
    }
    XCTAssertEqual(joined.wait(timeout: .now() + 60), .success)
    let taken = acquired.withLock { $0 }
    XCTAssertEqual(taken + semaphore.availablePermits, signals, "\(taken) taken")
  }

  /// 100,000 waiters cancelled at once by their scope: each takes its entry out of the queue
  /// without moving the others' (a removal that shifted every later entry made this O(n²), under
  /// the semaphore's lock), and the semaphore works on.
  func testHundredThousandWaitersCancelledByTheirScope() throws {
    let count = TestScale.liveCoroutines(100_000)
    let semaphore = CoSemaphore(value: 0)
    let scope = CoScope()
    let queue = DispatchQueue(label: "semaphore.many")
    let canceled = Locked(0)
    for _ in 0..<count {
      queue.startCoroutine(in: scope) {
        do { try semaphore.wait() } catch CoroutineError.canceled {
          canceled.withLock { $0 += 1 }
        }
      }
    }
    queue.sync {}  // all of them wait
    XCTAssertEqual(semaphore.waiterCount, count)
    try scope.cancelAndJoin()
    XCTAssertEqual(canceled.withLock { $0 }, count)
    XCTAssertEqual(semaphore.waiterCount, 0)
    XCTAssertEqual(semaphore.availablePermits, 0)
    // It works on: a permit goes to the next waiter, then to the pool.
    let next = queue.coroutineFuture { try semaphore.wait() }
    queue.sync {}
    XCTAssertEqual(semaphore.waiterCount, 1)
    semaphore.signal()
    XCTAssertNoThrow(try wait(for: next))
    semaphore.signal()
    XCTAssertEqual(semaphore.availablePermits, 1)
    XCTAssertTrue(semaphore.tryWait())
  }

  /// Waiters that give up in the middle of the queue leave it in order: permits go to the
  /// others first come, first served, and the queue forgets the ones that left.
  func testWaitersLeavingFromTheMiddleKeepTheOrder() throws {
    let semaphore = CoSemaphore(value: 0)
    let queue = DispatchQueue(label: "semaphore.middle")
    let served = Locked<[Int]>([])
    let scopes = (0..<100).map { _ in CoScope() }
    for index in 0..<100 {
      queue.startCoroutine(in: scopes[index]) {
        try semaphore.wait()
        served.withLock { $0.append(index) }
      }
    }
    queue.sync {}
    let leaving = (0..<100).filter { $0 % 3 != 0 }  // two thirds, most of them in the middle
    for index in leaving.reversed() { scopes[index].cancel() }
    queue.sync {}
    XCTAssertEqual(semaphore.waiterCount, 100 - leaving.count)
    for _ in 0..<(100 - leaving.count) { semaphore.signal() }
    queue.sync {}
    XCTAssertEqual(served.withLock { $0 }, (0..<100).filter { $0 % 3 == 0 })
    XCTAssertEqual(semaphore.waiterCount, 0)
    XCTAssertEqual(semaphore.availablePermits, 0)
    // A scope that goes cancels its coroutines, and -O ends `scopes`' lifetime at its last use
    // (the cancel loop): the waiters that stay would all have left.
    withExtendedLifetime(scopes) {}
  }

  /// Outside coroutines: a free permit is taken, none makes `wait()` throw
  /// `calledOutsideCoroutine` rather than block; `signal()` works anywhere.
  func testOutsideCoroutinesFollowsTheRuleOfAwait() {
    let semaphore = CoSemaphore(value: 1)
    XCTAssertNoThrow(try semaphore.wait())
    XCTAssertThrowsError(try semaphore.wait()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertThrowsError(try semaphore.wait(timeout: .seconds(1))) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    semaphore.signal()
    semaphore.signal()
    XCTAssertEqual(semaphore.availablePermits, 2)
    XCTAssertEqual(try semaphore.withPermit { semaphore.availablePermits }, 1)
    XCTAssertEqual(semaphore.availablePermits, 2)
  }

  func testNegativeValueIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "CoSemaphoreTests/testChildMisuse", variable: Self.childVariable, value: "negative",
      message: "CoSemaphore(value:) needs a value of 0 or more, not -1")
  }

  func testChildMisuse() {
    switch ProcessInfo.processInfo.environment[Self.childVariable] {
    case "negative":
      _ = CoSemaphore(value: -1)
    default:
      return  // only meaningful in the child process spawned above
    }
    XCTFail("the child should have crashed")
  }
}
