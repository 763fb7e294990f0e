import Covenant
import CovenantModel
import Dispatch
import Foundation
import XCTest

/// Timeouts and delays too long to ever expire (`.nanoseconds(.max)`, `.seconds(.max)`): they
/// must leave the process's dispatch timer unarmed rather than armed for a deadline libdispatch
/// reads as another clock's (past) time, which made the timer fire, find nothing due and re-arm
/// for the same deadline thousands of times a second.
///
/// No timing assertion: the tests check where the timer is armed, and count its firings while a
/// short real timer runs out (one firing for it, not hundreds).
final class TimerDeadlineTests: XCTestCase {
  /// The waits started by `body` (given a scope to run coroutines in) are armed, then the
  /// dispatch timer is checked: not armed past `TimerQueue.latestDeadline`, and not firing for
  /// nothing while a 20 ms timer runs out. The scope is cancelled at the end.
  private func expectNoSpin(
    _ what: String, file: StaticString = #filePath, line: UInt = #line,
    _ body: (CoScope) -> Void
  ) {
    let scope = CoScope()
    defer { scope.cancel() }
    body(scope)
    let armed = TimerQueue.statistics.armedDeadline
    XCTAssertLessThanOrEqual(
      armed ?? 0, TimerQueue.latestDeadline, "\(what): armed for \(armed ?? 0)", file: file,
      line: line)
    let before = TimerQueue.statistics.firings
    let fired = DispatchSemaphore(value: 0)
    DispatchQueue.global().scheduleTask(after: .milliseconds(20)) { fired.signal() }
    XCTAssertEqual(fired.wait(timeout: .now() + 10), .success, what, file: file, line: line)
    let firings = TimerQueue.statistics.firings - before
    // One firing for the 20 ms timer; a few more if other timers of the process fall due.
    XCTAssertLessThanOrEqual(
      firings, 5, "\(what): the timer fired \(firings) times", file: file, line: line)
  }

  /// Starts `body` as a coroutine in `scope` on a dispatch queue and returns once it has
  /// suspended (its wait, and so its timer, armed).
  private func startSuspended(
    in scope: CoScope, on scheduler: any CoroutineScheduler = DispatchQueue(label: "huge-timeouts"),
    _ body: @escaping @Sendable () throws -> Void
  ) {
    let name = "huge-timeout-\(UUID())"
    scheduler.startCoroutine(in: scope, name: name) { try body() }
    XCTAssertTrue(
      eventually(timeout: 10) {
        CoroutineSnapshot.take(backtraces: false).coroutines.first { $0.name == name }?.state
          == .suspended
      }, "\(name) never suspended")
  }

  func testAwaitWithTheLongestTimeoutLeavesTheTimerQuiet() {
    let promise = CoPromise<Int>()
    expectNoSpin("CoFuture.await(timeout: .nanoseconds(.max))") { scope in
      startSuspended(in: scope) { _ = try promise.await(timeout: .nanoseconds(.max)) }
    }
    let pending = Promise<Int>()
    expectNoSpin("Promise.await(timeout: .seconds(.max))") { scope in
      startSuspended(in: scope) { _ = try pending.await(timeout: .seconds(.max)) }
    }
    pending.fulfill(0)
  }

  func testDelayOfTheLongestDurationLeavesTheTimerQuiet() {
    expectNoSpin("Coroutine.delay(.nanoseconds(.max))") { scope in
      startSuspended(in: scope) { try Coroutine.delay(.nanoseconds(.max)) }
    }
    expectNoSpin("Coroutine.delay(.milliseconds(.max))") { scope in
      startSuspended(in: scope) { try Coroutine.delay(.milliseconds(.max)) }
    }
  }

  /// The default timers of a scheduler without its own (`DispatchTimer`), and scope deadlines.
  func testDefaultTimersAndScopeDeadlinesOfTheLongestDelayLeaveTheTimerQuiet() {
    expectNoSpin("Coroutine.delay on a scheduler with the default timers") { scope in
      startSuspended(in: scope, on: OwnTaskScheduler()) {
        try Coroutine.delay(.nanoseconds(.max))
      }
    }
    let deadlineScope = CoScope()
    expectNoSpin("CoScope.cancel(after: .nanoseconds(.max))") { _ in
      deadlineScope.cancel(after: .nanoseconds(.max))
    }
    XCTAssertFalse(deadlineScope.isCanceled)
    deadlineScope.cancel()
    let semaphore = CoSemaphore(value: 0)
    expectNoSpin("CoSemaphore.wait(timeout: .nanoseconds(.max))") { scope in
      startSuspended(in: scope) { try semaphore.wait(timeout: .nanoseconds(.max)) }
    }
  }

  /// A deadline just inside the limit is still armed (the clamp takes only what libdispatch
  /// cannot take), and cancelling it leaves nothing behind.
  func testLongButRepresentableTimeoutsAreStillArmed() {
    let promise = CoPromise<Int>()
    let scope = CoScope()
    let days = 365 * 24 * 3600
    startSuspended(in: scope) { _ = try promise.await(timeout: .seconds(100 * days)) }
    let armed = TimerQueue.statistics.armedDeadline
    XCTAssertNotNil(armed)
    XCTAssertLessThanOrEqual(armed ?? .max, TimerQueue.latestDeadline)
    scope.cancel()
  }
}

/// A scheduler with only `scheduleTask(_:)`: its timers are the default ones.
private final class OwnTaskScheduler: CoroutineScheduler, @unchecked Sendable {
  private let queue = DispatchQueue(label: "own-task-scheduler")
  func scheduleTask(_ task: @escaping () -> Void) {
    let task = UnsafeTransfer(task)
    queue.async { task.value() }
  }
}
