import Covenant
import CovenantTesting
import Foundation
import XCTest

/// `await(cancellingOnCancel:)`: a coroutine's cancellation passed on to what it awaits.
final class AwaitCancellingOnCancelTests: XCTestCase {
  /// Starts a coroutine on `scheduler` that runs `body` (an await), and returns its future.
  private func awaiting<T>(
    on scheduler: TestScheduler, _ body: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    scheduler.coroutineFuture(body)
  }

  func testCancelledCoroutineCancelsTheAwaitedFutureAndItsWork() {
    let scheduler = TestScheduler()
    let work = CoPromise<Int>()
    let stopped = Locked(false)
    work.whenCanceled { stopped.withLock { $0 = true } }  // coswift's onCancel
    let waiter = awaiting(on: scheduler) { try work.await(cancellingOnCancel: true) }
    scheduler.run()
    XCTAssertNil(waiter.result, "waiting")
    waiter.cancel()  // cancels the coroutine
    scheduler.run()
    XCTAssertTrue(work.isCanceled)
    XCTAssertTrue(stopped.withLock { $0 })
  }

  func testByDefaultTheAwaitedFutureIsLeftAlone() {
    let scheduler = TestScheduler()
    let work = CoPromise<Int>()
    let waiter = awaiting(on: scheduler) { try work.await() }
    let explicit = awaiting(on: scheduler) { try work.await(cancellingOnCancel: false) }
    scheduler.run()
    waiter.cancel()
    explicit.cancel()
    scheduler.run()
    XCTAssertNil(work.result, "Kotlin's Deferred.await(): the future is not cancelled")
    work.success(1)
    XCTAssertEqual(work.result.flatMap { try? $0.get() }, 1)
  }

  /// A future awaited by several coroutines is not cancelled by one of them unless it asks.
  func testOtherWaitersKeepWaitingUnlessOneAsksToCancel() throws {
    let scheduler = TestScheduler()
    let shared = CoPromise<Int>()
    let polite = awaiting(on: scheduler) { try shared.await() }
    let other = awaiting(on: scheduler) { try shared.await() }
    scheduler.run()
    polite.cancel()
    scheduler.run()
    XCTAssertNil(other.result, "one waiter giving up leaves the others waiting")
    let owner = awaiting(on: scheduler) { try shared.await(cancellingOnCancel: true) }
    scheduler.run()
    owner.cancel()
    scheduler.run()
    XCTAssertTrue(shared.isCanceled)
    XCTAssertThrowsError(try other.result!.get()) {
      XCTAssertEqual($0 as? CoFutureError, .canceled)
    }
  }

  func testAFutureCompletedFirstIsNotCancelled() {
    let scheduler = TestScheduler()
    let work = CoPromise<Int>()
    let waiter = awaiting(on: scheduler) { try work.await(cancellingOnCancel: true) }
    scheduler.run()
    work.success(5)
    waiter.cancel()
    scheduler.run()
    XCTAssertEqual(try work.result?.get(), 5)
  }

  func testAnAlreadyCancelledCoroutineCancelsWhatItWouldAwait() {
    let scheduler = TestScheduler()
    let work = CoPromise<Int>()
    let waiter = awaiting(on: scheduler) { () -> Int in
      try Coroutine.delay(.seconds(1))
      return try work.await(cancellingOnCancel: true)
    }
    scheduler.run()
    waiter.cancel()  // ends the delay; the await then finds the coroutine cancelled
    scheduler.run()
    XCTAssertFalse(work.isCanceled, "the delay threw first: the await never began")
    let late = awaiting(on: scheduler) { () -> Int in
      do { try Coroutine.delay(.seconds(1)) } catch {}  // swallows the cancel, waits anyway
      return try work.await(cancellingOnCancel: true)
    }
    scheduler.run()
    late.cancel()
    scheduler.run()
    XCTAssertTrue(work.isCanceled)
  }

  /// Cancelling the awaited future cancels the coroutine of a `coroutineFuture` too.
  func testTheCancellationReachesTheCoroutineComputingTheFuture() throws {
    let scheduler = TestScheduler()
    let workerUnwound = Locked(false)
    let worker = scheduler.coroutineFuture { () -> Int in
      defer { workerUnwound.withLock { $0 = true } }
      try Coroutine.delay(.seconds(60))
      return 1
    }
    let waiter = awaiting(on: scheduler) { try worker.await(cancellingOnCancel: true) }
    scheduler.run()
    waiter.cancel()
    scheduler.run()
    XCTAssertTrue(worker.isCanceled)
    XCTAssertTrue(workerUnwound.withLock { $0 }, "the worker's delay was cancelled")
  }

  func testTimedAwaitPassesTheCancellationButNotTheTimeout() {
    let scheduler = TestScheduler()
    let work = CoPromise<Int>()
    let timedOut = awaiting(on: scheduler) {
      try work.await(timeout: .seconds(1), cancellingOnCancel: true)
    }
    scheduler.run()
    scheduler.advance(by: .seconds(2))
    XCTAssertThrowsError(try timedOut.result!.get()) {
      XCTAssertEqual($0 as? CoFutureError, .timeout)
    }
    XCTAssertNil(work.result, "a timeout does not cancel the future")
    let canceled = awaiting(on: scheduler) {
      try work.await(timeout: .seconds(1), cancellingOnCancel: true)
    }
    scheduler.run()
    canceled.cancel()
    scheduler.run()
    XCTAssertTrue(work.isCanceled)
  }

  func testPromiseIsRejectedWithTheCancellation() {
    let scheduler = TestScheduler()
    let work = Promise<Int>.pending()
    let sawCancel = Locked(false)
    work.catch(on: .global()) { error in
      if (error as? CoFutureError) == .canceled { sawCancel.withLock { $0 = true } }
    }
    let waiter = awaiting(on: scheduler) { try work.await(cancellingOnCancel: true) }
    scheduler.run()
    waiter.cancel()
    scheduler.run()
    XCTAssertEqual(work.error as? CoFutureError, .canceled)
    XCTAssertTrue(waitForPromises(timeout: 5))
    XCTAssertTrue(sawCancel.withLock { $0 })
  }

  func testPromiseLeftAloneByDefault() {
    let scheduler = TestScheduler()
    let work = Promise<Int>.pending()
    let waiter = awaiting(on: scheduler) { try work.await() }
    let timed = awaiting(on: scheduler) {
      try work.await(timeout: .seconds(5), cancellingOnCancel: false)
    }
    scheduler.run()
    waiter.cancel()
    timed.cancel()
    scheduler.run()
    XCTAssertTrue(work.isPending)
    let owner = awaiting(on: scheduler) {
      try work.await(timeout: .seconds(5), cancellingOnCancel: true)
    }
    scheduler.run()
    owner.cancel()
    scheduler.run()
    XCTAssertEqual(work.error as? CoFutureError, .canceled)
  }

  func testOutsideACoroutineNothingIsCancelled() {
    let work = CoPromise<Int>()
    XCTAssertThrowsError(try work.await(cancellingOnCancel: true)) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertNil(work.result)
  }
}
