import Covenant
import CovenantTesting
import Dispatch
import XCTest

/// A coroutine whose scope (or future) is cancelled before its body starts never runs the body,
/// as with Kotlin's default start: not even up to its first suspension, which a free permit or
/// a resolved future would not make.
final class CanceledBeforeStartTests: XCTestCase {
  func testStartedInACancelledScopeTheBodyNeverRuns() throws {
    let scope = CoScope()
    scope.cancel()
    let permits = CoSemaphore(value: 1)  // free: waiting would not suspend
    let sent = Box(false)
    let queue = DispatchQueue(label: "CanceledBeforeStartTests")
    queue.startCoroutine(in: scope) {
      try permits.wait()
      sent.value = true  // the request the crawler sent after Ctrl-C
    }
    try scope.join()  // the coroutine has ended
    queue.sync {}
    XCTAssertFalse(sent.value)
    XCTAssertTrue(permits.tryWait(), "the permit was never taken")
  }

  func testScopeCancelledAfterTheStartButBeforeTheFirstSlice() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let ran = Box(false)
    scheduler.startCoroutine(in: scope) { ran.value = true }
    scope.cancel()
    scheduler.run()
    XCTAssertFalse(ran.value)
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }

  func testAFutureCancelledBeforeItsCoroutineStartsFailsWithoutRunningIt() {
    let scheduler = TestScheduler()
    let ran = Box(false)
    let future = scheduler.coroutineFuture { () -> Int in
      ran.value = true
      return 1
    }
    future.cancel()
    scheduler.run()
    XCTAssertFalse(ran.value)
    XCTAssertThrowsError(try future.result?.get()) {
      XCTAssertEqual($0 as? CoFutureError, .canceled)
    }
    XCTAssertTrue(future.isCanceled)
  }

  func testAFutureAddedToACancelledScopeFailsWithoutRunning() throws {
    let scheduler = TestScheduler()
    let scope = CoScope()
    scope.cancel()
    let ran = Box(false)
    let future = scheduler.coroutineFuture { () -> Int in
      ran.value = true
      return 1
    }.added(to: scope)
    scheduler.run()
    XCTAssertFalse(ran.value)
    XCTAssertThrowsError(try future.result?.get()) { XCTAssertTrue($0.isCancellation) }
    try future.join()
  }

  func testNothingIsReportedForABodyThatNeverRan() {
    let reported = Box<[String]>([])
    let scheduler = TestScheduler()
    let scope = CoScope()
    scope.uncaughtErrorHandler = { reported.value.append("\($0)") }
    scheduler.startCoroutine(in: scope) { throw CoFutureError.timeout }
    scope.cancel()
    scheduler.run()
    XCTAssertEqual(reported.value, [])
  }

  func testACoroutineCancelledOnceRunningStillUnwindsThroughItsBody() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let steps = Box<[String]>([])
    scheduler.startCoroutine(in: scope) {
      steps.value.append("started")
      defer { steps.value.append("unwound") }
      try Coroutine.delay(.seconds(1))
      steps.value.append("not reached")
    }
    scheduler.run()
    scope.cancel()
    scheduler.run()
    XCTAssertEqual(steps.value, ["started", "unwound"])
  }
}
