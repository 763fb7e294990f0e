import Covenant
import CovenantCore
import CovenantTesting
import Dispatch
import XCTest

/// Every `Duration` overload of a delay or a timeout, on a `TestScheduler`: each waits exactly
/// the virtual time it was given, and the `DispatchTimeInterval` forms keep their meaning.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class DurationOverloadTests: XCTestCase {
  // MARK: The conversion

  func testDurationsBecomeWholeNanosecondsRoundedUp() {
    XCTAssertEqual(Duration.seconds(1.5).clampedNanoseconds, 1_500_000_000)
    XCTAssertEqual(Duration.milliseconds(250).clampedNanoseconds, 250_000_000)
    XCTAssertEqual((Duration.nanoseconds(3) / 2).clampedNanoseconds, 2, "1.5 ns waits 2 ns")
    XCTAssertEqual(Duration.zero.clampedNanoseconds, 0)
    XCTAssertEqual(Duration.seconds(-2).clampedNanoseconds, 0)
    XCTAssertEqual((Duration.zero - .nanoseconds(1) / 2).clampedNanoseconds, 0)
    XCTAssertEqual(Duration.seconds(Int64.max).clampedNanoseconds, .max)
    XCTAssertEqual(Duration.seconds(Int64.max).dispatchTimeInterval, .nanoseconds(.max))
    XCTAssertEqual(Duration.milliseconds(7).dispatchTimeInterval, .milliseconds(7))
    XCTAssertEqual(Duration(nanoseconds: 1_250_000_000), .milliseconds(1250))
  }

  // MARK: Coroutine.delay

  func testDelayWaitsItsDurationOfVirtualTime() {
    let scheduler = TestScheduler()
    let woke = Box<[Duration]>([])
    let pause: Duration = .milliseconds(500)
    scheduler.startCoroutine {
      try Coroutine.delay(pause * 3)
      woke.value.append(scheduler.elapsed)
      try Coroutine.delay(.seconds(0.25))
      woke.value.append(scheduler.elapsed)
      try Coroutine.delay(.seconds(-1))  // no wait
      woke.value.append(scheduler.elapsed)
    }
    scheduler.run()
    scheduler.advance(by: .milliseconds(1_499))
    XCTAssertEqual(woke.value, [])
    scheduler.advance(by: .milliseconds(1))
    XCTAssertEqual(woke.value, [.seconds(1.5)])
    scheduler.advance(by: .milliseconds(250))
    XCTAssertEqual(woke.value, [.seconds(1.5), .seconds(1.75), .seconds(1.75)])
  }

  func testANegativeDelayIsStillACancellationPoint() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let outcome = Box("")
    scheduler.startCoroutine(in: scope) {
      scope.cancel()
      do {
        try Coroutine.delay(Duration.seconds(-1))
        outcome.value = "went on"
      } catch {
        outcome.value = "\(error)"
      }
    }
    scheduler.run()
    XCTAssertEqual(outcome.value, "canceled")
  }

  func testDelayOutsideACoroutineThrows() {
    XCTAssertThrowsError(try Coroutine.delay(Duration.seconds(1))) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  // MARK: await(timeout:) on CoFuture and Promise

  func testFutureAwaitTimesOutAfterItsDurationAndLeavesTheFutureAlone() {
    let scheduler = TestScheduler()
    let reply = CoPromise<Int>()
    let outcome = scheduler.coroutineFuture { () throws -> Duration in
      do {
        _ = try reply.await(timeout: .seconds(2.5))
      } catch CoFutureError.timeout {}
      return scheduler.elapsed
    }
    scheduler.advance(by: .milliseconds(2_499))
    XCTAssertNil(outcome.result)
    scheduler.advance(by: .milliseconds(1))
    XCTAssertEqual(try outcome.result?.get(), .milliseconds(2_500))
    XCTAssertNil(reply.result, "not cancelled by default")
    XCTAssertFalse(reply.isCanceled)
  }

  func testFutureAwaitThatCancelsOnTimeoutCancelsTheFuture() {
    let scheduler = TestScheduler()
    let reply = CoPromise<Int>()
    let other = CoPromise<Int>()
    let outcome = scheduler.coroutineFuture { () throws -> String in
      do {
        _ = try reply.await(timeout: .seconds(1.5), cancelOnTimeout: true)
        return "returned"
      } catch CoFutureError.timeout {}
      do {
        _ = try other.await(timeout: .seconds(1), cancelOnTimeout: true)  // DispatchTimeInterval
        return "returned"
      } catch CoFutureError.timeout {
        return "both timed out"
      }
    }
    scheduler.advance(by: .milliseconds(1_500))
    XCTAssertTrue(reply.isCanceled)
    XCTAssertNil(outcome.result)
    XCTAssertFalse(other.isCanceled)
    scheduler.advance(by: .seconds(1))
    XCTAssertTrue(other.isCanceled)
    XCTAssertEqual(try outcome.result?.get(), "both timed out")
  }

  func testCancellingAwaitReturnsTheValueInTimeAndDisarmsItsTimer() {
    let scheduler = TestScheduler()
    let reply = CoPromise<Int>()
    let outcome = scheduler.coroutineFuture {
      try reply.await(timeout: .seconds(10), cancelOnTimeout: true)
    }
    scheduler.advance(by: .seconds(3))
    reply.success(7)
    scheduler.run()
    XCTAssertEqual(try outcome.result?.get(), 7)
    XCTAssertFalse(reply.isCanceled)
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "the timer went with the wait")
  }

  func testACancellingAwaitOfAFailedFutureRethrowsItsError() {
    let scheduler = TestScheduler()
    let reply = CoPromise<Int>()
    reply.fail(CoFutureError.timeout)  // the future's own outcome, not this await's timeout
    let outcome = scheduler.coroutineFuture {
      try reply.await(timeout: .seconds(1), cancelOnTimeout: true)
    }
    scheduler.run()
    XCTAssertThrowsError(try outcome.result?.get()) {
      XCTAssertEqual($0 as? CoFutureError, .timeout)
    }
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }

  func testPromiseAwaitTimesOutAfterItsDuration() {
    let scheduler = TestScheduler()
    let pending = Promise<Int>.pending()
    let outcome = scheduler.coroutineFuture { () throws -> Duration in
      do {
        _ = try pending.await(timeout: .seconds(0.75))
      } catch CoFutureError.timeout {}
      return scheduler.elapsed
    }
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(try outcome.result?.get(), .milliseconds(750))
    XCTAssertTrue(pending.isPending)
    pending.fulfill(1)
  }

  // MARK: select's onTimeout

  func testSelectTimesOutAfterItsDuration() {
    let scheduler = TestScheduler()
    let quiet = CoChannel<Int>()
    let outcome = scheduler.coroutineFuture { () throws -> String in
      try CoChannel.select { select in
        select.onReceive(quiet) { "received \($0)" }
        select.onTimeout(Duration.milliseconds(300)) { "quiet at \(scheduler.elapsed)" }
      }
    }
    scheduler.advance(by: .milliseconds(299))
    XCTAssertNil(outcome.result)
    scheduler.advance(by: .milliseconds(1))
    XCTAssertEqual(try outcome.result?.get(), "quiet at \(Duration.milliseconds(300))")
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }

  // MARK: CoScope.cancel(after:)

  func testScopeDeadlineFromACoroutineUsesItsScheduler() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let ended = Box<Duration?>(nil)
    scheduler.startCoroutine(in: scope) {
      scope.cancel(after: .seconds(4.5))
      defer { ended.value = scheduler.elapsed }
      try CoPromise<Void>().await()
    }
    scheduler.run()
    scheduler.advance(by: .milliseconds(4_499))
    XCTAssertFalse(scope.isCanceled)
    scheduler.advance(by: .milliseconds(1))
    XCTAssertTrue(scope.isCanceled)
    XCTAssertEqual(ended.value, .milliseconds(4_500))
  }

  func testScopeDeadlineOnAGivenScheduler() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    scope.cancel(after: Duration.seconds(2), on: scheduler)
    scope.cancel(after: Duration.seconds(60), on: scheduler)  // the earliest wins
    scheduler.advance(by: .seconds(1))
    XCTAssertFalse(scope.isCanceled)
    scheduler.advance(by: .seconds(1))
    XCTAssertTrue(scope.isCanceled)
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "the later deadline went with the scope")
  }

  // MARK: CoSemaphore.wait(timeout:)

  func testSemaphoreWaitTimesOutAfterItsDurationTakingNoPermit() {
    let scheduler = TestScheduler()
    let semaphore = CoSemaphore(value: 0)
    let outcome = scheduler.coroutineFuture { () throws -> String in
      do {
        try semaphore.wait(timeout: .seconds(1.25))
        return "got a permit"
      } catch CoFutureError.timeout {
        return "timed out at \(scheduler.elapsed)"
      }
    }
    scheduler.advance(by: .seconds(2))
    XCTAssertEqual(try outcome.result?.get(), "timed out at \(Duration.milliseconds(1_250))")
    semaphore.signal()
    XCTAssertTrue(semaphore.tryWait(), "the permit was not taken by the timed-out wait")
  }

  func testSemaphoreWaitGetsAPermitInTime() {
    let scheduler = TestScheduler()
    let semaphore = CoSemaphore(value: 0)
    let outcome = scheduler.coroutineFuture { () throws -> Duration in
      try semaphore.wait(timeout: .seconds(5.0))
      return scheduler.elapsed
    }
    scheduler.advance(by: .seconds(1))
    semaphore.signal()
    scheduler.run()
    XCTAssertEqual(try outcome.result?.get(), .seconds(1))
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }

  // MARK: The old forms keep their meaning

  /// `.seconds(1)` exists on both `DispatchTimeInterval` and `Duration`: the calls that compiled
  /// before still compile (not ambiguous) and mean the same time.
  func testLiteralIntervalsStillMeanTheSameTime() {
    let scheduler = TestScheduler()
    let woke = Box<[Duration]>([])
    scheduler.startCoroutine {
      try Coroutine.delay(.seconds(1))
      woke.value.append(scheduler.elapsed)
      _ = try? CoPromise<Int>().await(timeout: .milliseconds(500))
      woke.value.append(scheduler.elapsed)
    }
    scheduler.advance(by: .seconds(2))
    XCTAssertEqual(woke.value, [.seconds(1), .seconds(1.5)])
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }
}
