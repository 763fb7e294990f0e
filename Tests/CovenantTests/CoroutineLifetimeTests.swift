import CCoroutineContext
import Covenant
import CovenantModel
import Dispatch
import Foundation
import XCTest

/// What a finished, dropped or cancelled coroutine still holds: its stack goes back when it
/// finishes, even while something keeps the coroutine object; a future does not keep its
/// finished coroutine; a coroutine its scheduler drops unrun ends its waiters; a cancelled join
/// leaves nothing registered.
final class CoroutineLifetimeTests: XCTestCase {
  /// A dedicated stack of a size other than the default: allocated as a mapping of its own and
  /// returned to the system when released (not cached), so `cov_stack_mappings_in_use()` shows
  /// whether it is still held.
  private static let ownStackSize = 3 << 20

  /// A coroutine that handed out a callback the caller keeps: the callback keeps the coroutine
  /// object, but not its stack once it has finished.
  func testFinishedCoroutineGivesItsStackBackWhileSomethingKeepsIt() throws {
    let kept = Box<(@Sendable (Int) -> Void)?>(nil)
    let mappingsWhileRunning = Box(0)
    let scope = CoScope()
    DispatchQueue(label: "lifetime").startCoroutine(in: scope, stackSize: Self.ownStackSize) {
      let value: Int = try Coroutine.await { callback in
        kept.value = callback  // kept after the coroutine has finished
        callback(1)
      }
      XCTAssertEqual(value, 1)
      mappingsWhileRunning.value = cov_stack_mappings_in_use()
    }
    try scope.join()
    XCTAssertNotNil(kept.value)
    XCTAssertLessThan(
      cov_stack_mappings_in_use(), mappingsWhileRunning.value,
      "the finished coroutine's stack is still mapped")
    kept.value = nil
  }

  /// A kept future of a finished coroutine: neither the coroutine object (seen through the
  /// scheduler it holds) nor its stack stay with the future.
  func testKeptFutureDoesNotKeepItsFinishedCoroutine() throws {
    weak var weakScheduler: DroppingScheduler?
    let mappingsWhileRunning = Box(0)
    let future: CoFuture<Int>
    do {
      let scheduler = DroppingScheduler(runs: true)
      weakScheduler = scheduler
      future = scheduler.coroutineFuture(stackSize: Self.ownStackSize) {
        mappingsWhileRunning.value = cov_stack_mappings_in_use()
        return 7
      }
    }
    try future.join()
    XCTAssertEqual(try future.result?.get(), 7)
    XCTAssertLessThan(cov_stack_mappings_in_use(), mappingsWhileRunning.value)
    XCTAssertTrue(
      eventually(timeout: 10) { weakScheduler == nil },
      "the future keeps its finished coroutine (and the coroutine its scheduler)")
    withExtendedLifetime(future) {}
  }
}

/// A scheduler that runs its tasks on a queue of its own, or (`runs: false`) drops them unrun,
/// as an event loop that has shut down, or an `OperationQueue` after `cancelAllOperations()`,
/// does.
final class DroppingScheduler: CoroutineScheduler, @unchecked Sendable {
  private let queue = DispatchQueue(label: "dropping-scheduler")
  private let runs: Bool
  init(runs: Bool) { self.runs = runs }
  func scheduleTask(_ task: @escaping () -> Void) {
    guard runs else { return }
    let task = UnsafeTransfer(task)
    queue.async { task.value() }
  }
}
