import CCoroutineContext
import Covenant
import CovenantModel
import CovenantTesting
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

  // MARK: Cancelled joins

  /// Starts `count` coroutines that each `join` and are cancelled while they wait, and waits
  /// until all have ended.
  private func cancelJoins(
    _ count: Int, on scheduler: DroppingScheduler = DroppingScheduler(runs: true),
    _ join: @escaping @Sendable () throws -> Void
  ) throws {
    let joiners = CoScope()
    let started = DispatchSemaphore(value: 0)
    for _ in 0..<count {
      scheduler.startCoroutine(in: joiners) {
        started.signal()
        XCTAssertThrowsError(try join()) { XCTAssertEqual($0 as? CoroutineError, .canceled) }
      }
    }
    for _ in 0..<count { started.wait() }
    scheduler.queue.sync {}  // every joiner has suspended in its join
    try joiners.cancelAndJoin()
  }

  /// Joins of a coroutine that never finishes, cancelled: none stays registered with it (each
  /// would keep its joiner, with its stack, for as long as the coroutine lives).
  func testCancelledJoinsOfAFutureLeaveNoCallbackBehind() throws {
    let never = CoPromise<Int>()
    let worker = DispatchQueue(label: "worker").coroutineFuture { try never.await() }
    XCTAssertEqual(worker.coroutineFinishCallbackCount, 0)
    try cancelJoins(200) { try worker.join() }
    XCTAssertEqual(worker.coroutineFinishCallbackCount, 0, "cancelled joins left callbacks")
    // A join still works, and the callbacks of joins that were not cancelled run.
    let joined = DispatchQueue(label: "joiner").coroutineFuture { try worker.join() }
    XCTAssertTrue(eventually(timeout: 10) { worker.coroutineFinishCallbackCount == 1 })
    never.success(1)
    XCTAssertNoThrow(try wait(for: joined))
    XCTAssertEqual(try worker.result?.get(), 1)
  }

  /// The same for the joins of a scope.
  func testCancelledJoinsOfAScopeLeaveNoCallbackBehind() throws {
    let never = CoPromise<Int>()
    let target = CoScope()
    DispatchQueue(label: "worker").startCoroutine(in: target) { _ = try never.await() }
    try cancelJoins(200) { try target.join() }
    XCTAssertEqual(target.joinerCount, 0, "cancelled joins left callbacks")
    let joined = DispatchQueue(label: "joiner").coroutineFuture { try target.join() }
    XCTAssertTrue(eventually(timeout: 10) { target.joinerCount == 1 })
    never.success(1)
    XCTAssertNoThrow(try wait(for: joined))
    XCTAssertEqual(target.joinerCount, 0)
  }

  /// A future that is not a coroutine's: a cancelled join leaves no observer in it either (it
  /// would keep the joining coroutine, seen here through the scheduler it holds).
  func testCancelledJoinOfAPlainFutureLeavesNoObserverBehind() throws {
    weak var weakScheduler: DroppingScheduler?
    let never = CoPromise<Int>()
    do {
      let scheduler = DroppingScheduler(runs: true)
      weakScheduler = scheduler
      try cancelJoins(1, on: scheduler) { try never.join() }
    }
    XCTAssertTrue(
      eventually(timeout: 10) { weakScheduler == nil }, "the future keeps the cancelled joiner")
    withExtendedLifetime(never) {}
  }

  /// Joins cancelled while their coroutine finishes, on real threads: every join ends (returns
  /// or throws `.canceled`), whichever of the finish and the withdrawal comes first, and none is
  /// told twice or left behind.
  func testJoinsCancelledWhileTheirCoroutineFinishes() throws {
    let queue = DispatchQueue(label: "join-race", attributes: .concurrent)
    let rounds = TestScale.stress(300)
    let joinsPerRound = 6
    let outcomes = Locked((started: 0, returned: 0, canceled: 0))
    var scopes: [CoScope] = []
    for _ in 0..<rounds {
      let gate = CoPromise<Void>()
      let worker = queue.coroutineFuture { try gate.await() }
      let joiners = CoScope()
      scopes.append(joiners)
      for _ in 0..<joinsPerRound {
        queue.startCoroutine(in: joiners) {
          outcomes.withLock { $0.started += 1 }
          do {
            try worker.join()
            outcomes.withLock { $0.returned += 1 }
          } catch {
            XCTAssertEqual(error as? CoroutineError, .canceled)
            outcomes.withLock { $0.canceled += 1 }
          }
        }
      }
      // The worker finishes and the joiners are cancelled at about the same time.
      queue.async { gate.success(()) }
      queue.async { joiners.cancel() }
    }
    // Every joiner has ended: returned, cancelled in its join, or (cancelled before it started)
    // never run.
    let ended = DispatchSemaphore(value: 0)
    let allScopes = scopes
    DispatchQueue.global().async {
      for scope in allScopes { try? scope.join() }
      ended.signal()
    }
    XCTAssertEqual(ended.wait(timeout: .now() + 60), .success)
    let (started, returned, canceled) = outcomes.withLock { $0 }
    XCTAssertEqual(returned + canceled, started)
    XCTAssertGreaterThan(started, 0)
  }

  // MARK: Coroutines their scheduler drops unrun

  /// A coroutine its scheduler drops without running it ends its waiters: the scope's `join()`
  /// returns (it waited forever), and it leaves the registry.
  func testCoroutineDroppedUnrunEndsItsScopesJoin() throws {
    let checkpoint = CoroutineSnapshot.nextID
    let scope = CoScope()
    DroppingScheduler(runs: false).startCoroutine(in: scope) { XCTFail("a dropped task ran") }
    let joined = DispatchQueue.global().coroutineFuture { try scope.join() }
    XCTAssertNoThrow(try wait(for: joined, timeout: 10))
    XCTAssertEqual(scope.joinerCount, 0)
    try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 10)
  }

  /// The future of a coroutine dropped unrun fails with `CoFutureError.canceled` (nobody can
  /// complete it any more), its `join()` returns, and future and coroutine do not keep each
  /// other.
  func testFutureOfACoroutineDroppedUnrunFailsAndGoes() throws {
    weak var weakFuture: CoFuture<Int>?
    do {
      let future = DroppingScheduler(runs: false).coroutineFuture { 1 }
      weakFuture = future
      XCTAssertThrowsError(try wait(for: future, timeout: 10)) {
        XCTAssertEqual($0 as? CoFutureError, .canceled)
      }
      XCTAssertTrue(future.isCanceled)
      let joined = DispatchQueue.global().coroutineFuture { try future.join() }
      XCTAssertNoThrow(try wait(for: joined, timeout: 10))
    }
    XCTAssertTrue(eventually(timeout: 10) { weakFuture == nil }, "the future leaks")
  }
}

/// A scheduler that runs its tasks on a queue of its own, or (`runs: false`) drops them unrun,
/// as an event loop that has shut down, or an `OperationQueue` after `cancelAllOperations()`,
/// does.
final class DroppingScheduler: CoroutineScheduler, @unchecked Sendable {
  let queue = DispatchQueue(label: "dropping-scheduler")
  private let runs: Bool
  init(runs: Bool) { self.runs = runs }
  func scheduleTask(_ task: @escaping () -> Void) {
    guard runs else { return }
    let task = UnsafeTransfer(task)
    queue.async { task.value() }
  }
}
