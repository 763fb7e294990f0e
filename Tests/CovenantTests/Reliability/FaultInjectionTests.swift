import Covenant
import CovenantModel
import Dispatch
import Foundation
import XCTest

/// Fault injection (issue 11, item 4): throwing blocks and bodies, cancel storms, a scheduler
/// that runs tasks late / out of order / on random threads, and stacks that cannot be had.
/// Invariants hold, nothing hangs, and dropped objects are deallocated (weak references nil).
final class FaultInjectionTests: XCTestCase {
  /// Blocks that throw at random points of promise chains, coroutine bodies that throw after
  /// awaiting: every chain ends rejected with the thrown error or fulfilled, every future
  /// fails with its body's error, and everything is deallocated afterwards.
  func testThrowingBlocksAndBodiesKeepOutcomesAndLeakNothing() throws {
    var weakPromises: [WeakBox<Promise<Int>>] = []
    var weakFutures: [WeakBox<CoFuture<Int>>] = []
    let group = DispatchGroup()
    let wrong = Locked<[String]>([])
    do {
      for index in 0..<2_000 {
        let throwAt = index % 5  // 0...3: the stage that throws; 4: none
        var promise = Promise<Int>(on: .global()) { () throws -> Int in
          if throwAt == 0 { throw FaultError.stage(0) }
          return index
        }
        weakPromises.append(WeakBox(promise))
        for stage in 1...3 {
          promise = promise.then(on: .global()) { (value: Int) throws -> Int in
            if throwAt == stage { throw FaultError.stage(stage) }
            return value + 1
          }
          weakPromises.append(WeakBox(promise))
        }
        group.enter()
        promise.then(on: .global()) { (value: Int) -> Void in
          if throwAt != 4 || value != index + 3 {
            wrong.withLock { $0.append("chain \(index): \(value)") }
          }
          group.leave()
        }.catch(on: .global()) { error in
          if error as? FaultError != .stage(throwAt) {
            wrong.withLock { $0.append("chain \(index): \(error)") }
          }
          group.leave()
        }
        let future = DispatchQueue.global().coroutineFuture { () throws -> Int in
          try Coroutine.yield()
          if index % 2 == 0 { throw FaultError.stage(index) }
          return index
        }
        weakFutures.append(WeakBox(future))
        group.enter()
        future.whenComplete { result in
          switch result {
          case .success(let value) where index % 2 == 1 && value == index: break
          case .failure(let error) where index % 2 == 0 && error as? FaultError == .stage(index):
            break
          default: wrong.withLock { $0.append("future \(index): \(result)") }
          }
          group.leave()
        }
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "outcomes missing")
    XCTAssertEqual(wrong.withLock { $0 }, [])
    XCTAssertTrue(waitForPromises(timeout: 60))
    XCTAssertTrue(
      eventually(timeout: 30) { weakPromises.allSatisfy { $0.object == nil } }, "promises leaked")
    XCTAssertTrue(
      eventually(timeout: 30) { weakFutures.allSatisfy { $0.object == nil } }, "futures leaked")
  }

  /// A cancel storm: a scope cancelled from another thread while 3,000 coroutines are starting,
  /// awaiting and finishing. Each coroutine ends exactly once, either normally or with
  /// `CoroutineError.canceled` (or, if it had not started, without running its body); later
  /// awaits throw at once; the futures they awaited are deallocated afterwards; the scope's
  /// `whenComplete` runs once.
  func testCancelStormWhileThousandsOfAwaitsStartAndFinish() {
    let count = 3_000
    let scope = CoScope()
    let schedulers = HopTargets().schedulers
    let completions = Locked(0)
    scope.whenComplete { completions.withLock { $0 += 1 } }
    let endings = CallbackLedger(capacity: count)
    let unexpected = Locked<[String]>([])
    let normal = Locked(0)
    let started = DispatchSemaphore(value: 0)
    var weakFutures: [WeakBox<CoPromise<Int>>] = []
    Thread.detachNewThread {
      started.wait()
      scope.cancel()
    }
    for index in 0..<count {
      let future = CoPromise<Int>()
      weakFutures.append(WeakBox(future))
      DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(index % 300)) {
        future.success(index)
      }
      if index == count / 3 { started.signal() }
      schedulers[index % 4].startCoroutine(in: scope) {
        defer { endings.ran(index) }
        do {
          _ = try future.await()
          try Coroutine.yield()
          try Coroutine.delay(.microseconds(50))
          normal.withLock { $0 += 1 }
        } catch CoroutineError.canceled {
          // After a cancel, every later await throws at once.
          do {
            try Coroutine.yield()
            unexpected.withLock { $0.append("\(index): await after cancel returned") }
          } catch CoroutineError.canceled {
          } catch { unexpected.withLock { $0.append("\(index): \(error)") } }
        } catch {
          unexpected.withLock { $0.append("\(index): \(error)") }
        }
      }
    }
    // Every coroutine has ended (the scope's `join`): those cancelled before they started
    // without running their body.
    let joined = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      try? scope.join()
      joined.signal()
    }
    XCTAssertEqual(joined.wait(timeout: .now() + 120), .success, "coroutines still running")
    XCTAssertLessThanOrEqual(endings.total, count)
    XCTAssertGreaterThan(endings.total, 0)
    XCTAssertEqual(endings.duplicates, 0)
    XCTAssertEqual(unexpected.withLock { $0 }, [])
    XCTAssertLessThan(normal.withLock { $0 }, count, "the cancel reached no coroutine")
    XCTAssertTrue(scope.isCanceled)
    XCTAssertEqual(completions.withLock { $0 }, 1)
    XCTAssertTrue(
      eventually(timeout: 30) { weakFutures.allSatisfy { $0.object == nil } }, "futures leaked")
  }

  /// A storm of `cancel()` on coroutine futures while their coroutines await: each future ends
  /// either with its coroutine's value or with `CoFutureError.canceled`, and every coroutine
  /// ends (one cancelled before it started without running its body).
  func testCancellingRunningCoroutineFutures() {
    let count = 3_000
    let group = DispatchGroup()
    let wrong = Locked<[String]>([])
    let ended = Locked(0)
    var futures: [CoFuture<Int>] = []
    for index in 0..<count {
      let gate = CoPromise<Int>()
      let future = DispatchQueue.global().coroutineFuture { () throws -> Int in
        defer { ended.withLock { $0 += 1 } }
        return try gate.await() + 1
      }
      group.enter()
      future.whenComplete { result in
        switch result {
        case .success(let value) where value == index + 1: break
        case .failure(CoFutureError.canceled): break
        default: wrong.withLock { $0.append("\(index): \(result)") }
        }
        group.leave()
      }
      DispatchQueue.global().async { future.cancel() }
      DispatchQueue.global().async { gate.success(index) }
      futures.append(future)
    }
    XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
    XCTAssertEqual(wrong.withLock { $0 }, [])
    let joined = DispatchSemaphore(value: 0)
    let all = futures
    DispatchQueue.global().async {
      for future in all { try? future.join() }  // its coroutine has ended, run or not
      joined.signal()
    }
    XCTAssertEqual(joined.wait(timeout: .now() + 60), .success, "coroutines still running")
    XCTAssertLessThanOrEqual(ended.withLock { $0 }, count)
  }

  /// A user-defined scheduler that runs each task once but late, out of order and on random
  /// threads: 2,000 coroutines awaiting futures, delays and yields all finish with the right
  /// results, and the scheduler ran exactly the tasks it was given.
  func testMisbehavingSchedulerLosesNothing() {
    let scheduler = ShufflingScheduler(seed: 99)
    let count = 2_000
    let group = DispatchGroup()
    let sum = Locked(0)
    for index in 0..<count {
      let input = CoPromise<Int>()
      DispatchQueue.global().async { input.success(index) }
      group.enter()
      scheduler.startCoroutine {
        defer { group.leave() }
        var total = try input.await()
        try Coroutine.yield()
        try Coroutine.delay(.microseconds(10))
        total += try CoFuture<Int>(result: .success(1)).await()
        total += try Coroutine.await { (resume: @escaping @Sendable (Int) -> Void) in
          DispatchQueue.global().async { resume(1) }
        }
        sum.withLock { $0 += total }
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "coroutines still running")
    XCTAssertEqual(sum.withLock { $0 }, (0..<count).reduce(0, +) + 2 * count)
    XCTAssertTrue(eventually(timeout: 30) { scheduler.executedCount == scheduler.scheduledCount })
  }

  /// No stack can be had (a size no address space can map): the future fails with
  /// `CoroutineStartError`, nothing hangs, and ordinary coroutines keep working.
  func testStackExhaustionFailsWithCoroutineStartError() throws {
    let huge = 1 << 50  // 1 PiB: more than a 48-bit address space holds
    let future = DispatchQueue.global().coroutineFuture(stackSize: huge) { 1 }
    let result = try XCTUnwrap(waitForResult(future))
    XCTAssertThrowsError(try result.get()) { error in
      let startError = error as? CoroutineStartError
      XCTAssertEqual(startError?.stackSize, huge)
      XCTAssertEqual(
        startError?.description, "Covenant: could not allocate a coroutine stack of \(huge) bytes")
    }
    let weak = WeakBox(future)
    _ = consume future
    XCTAssertTrue(eventually(timeout: 10) { weak.object == nil })
    let normal = DispatchQueue.global().coroutineFuture { 2 }
    XCTAssertEqual(try waitForResult(normal)?.get(), 2)
  }

  private func waitForResult<T>(_ future: CoFuture<T>) -> Result<T, any Error>? {
    let done = DispatchSemaphore(value: 0)
    future.whenComplete { _ in done.signal() }
    _ = done.wait(timeout: .now() + 30)
    return future.result
  }
}

private enum FaultError: Error, Equatable { case stage(Int) }
