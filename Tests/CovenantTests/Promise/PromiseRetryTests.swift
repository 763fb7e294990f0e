import Covenant
import Foundation
import XCTest

final class PromiseRetryTests: PromiseTestCase {
  /// A `work` block that fails its first `failures` runs (with TestError(run)), then fulfils
  /// with the run number; `runs` counts the runs.
  private func work(failing failures: Int, runs: Recorder<Int>)
    -> @Sendable () throws -> Promise<Int>
  {
    {
      let run = runs.count + 1
      runs.append(run)
      return run <= failures ? Promise(TestError(run)) : Promise(run)
    }
  }

  func testFulfilledFirstTimeRunsOnce() throws {
    let runs = Recorder<Int>()
    let result = retry(on: queue.queue, attempts: 3, delay: 0.001, work(failing: 0, runs: runs))
    XCTAssertEqual(try wait(for: result, timeout: 2), 1)
    XCTAssertEqual(runs.count, 1)
  }

  func testRetriesUntilFulfilled() throws {
    let runs = Recorder<Int>()
    let result = retry(on: queue.queue, attempts: 3, delay: 0.001, work(failing: 2, runs: runs))
    XCTAssertEqual(try wait(for: result, timeout: 2), 3)
    XCTAssertEqual(runs.count, 3)
  }

  func testRejectsWithLastErrorAfterAttemptsPlusOneRuns() {
    let runs = Recorder<Int>()
    let result = retry(on: queue.queue, attempts: 3, delay: 0.001, work(failing: 99, runs: runs))
    settle()
    XCTAssertEqual(runs.count, 4)
    XCTAssertEqual(result.error as? TestError, TestError(4))
  }

  func testDefaultsRetryOnce() {
    let runs = Recorder<Int>()
    let result = retry(on: queue.queue, delay: 0.001, work(failing: 99, runs: runs))
    settle()
    XCTAssertEqual(runs.count, 2)
    XCTAssertEqual(result.error as? TestError, TestError(2))
  }

  func testConditionIsAskedWithRemainingAttempts() {
    let runs = Recorder<Int>()
    let asked = Recorder<Int>()
    let errors = Recorder<Int>()
    let result = retry(
      on: queue.queue, attempts: 3, delay: 0.001,
      condition: { remaining, error in
        asked.append(remaining)
        errors.append((error as! TestError).id)
        return true
      },
      work(failing: 99, runs: runs))
    settle()
    XCTAssertEqual(asked.elements, [3, 2, 1], "not asked when no attempt is left")
    XCTAssertEqual(errors.elements, [1, 2, 3])
    XCTAssertEqual(runs.count, 4)
    XCTAssertEqual(result.error as? TestError, TestError(4))
  }

  func testConditionCanStopRetrying() {
    let runs = Recorder<Int>()
    let asked = Recorder<Int>()
    let result = retry(
      on: queue.queue, attempts: 3, delay: 0.001,
      condition: { remaining, _ in
        asked.append(remaining)
        return remaining > 2
      },
      work(failing: 99, runs: runs))
    settle()
    XCTAssertEqual(asked.elements, [3, 2])
    XCTAssertEqual(runs.count, 2)
    XCTAssertEqual(result.error as? TestError, TestError(2))
  }

  func testZeroAndNegativeAttemptsRunOnceWithoutAsking() {
    for attempts in [0, -5] {
      let runs = Recorder<Int>()
      let asked = Recorder<Int>()
      let result = retry(
        on: queue.queue, attempts: attempts, delay: 0.001,
        condition: { remaining, _ in
          asked.append(remaining)
          return true
        },
        work(failing: 99, runs: runs))
      settle()
      XCTAssertEqual(runs.count, 1, "attempts: \(attempts)")
      XCTAssertEqual(asked.count, 0)
      XCTAssertEqual(result.error as? TestError, TestError(1))
    }
  }

  func testNegativeDelayIsZero() throws {
    let runs = Recorder<Int>()
    let result = retry(on: queue.queue, attempts: 2, delay: -1, work(failing: 2, runs: runs))
    XCTAssertEqual(try wait(for: result, timeout: 2), 3)
  }

  func testWaitsTheDelayBetweenRuns() throws {
    let runs = Recorder<Int>()
    let start = Date()
    let result = retry(on: queue.queue, attempts: 2, delay: 0.02, work(failing: 2, runs: runs))
    XCTAssertEqual(try wait(for: result, timeout: 2), 3)
    XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.038)
  }

  func testThrowingWorkCountsAsAFailedRun() {
    let runs = Recorder<Int>()
    let result = retry(on: queue.queue, attempts: 2, delay: 0.001) { () -> Promise<Int> in
      runs.append(runs.count + 1)
      throw TestError(runs.count)
    }
    settle()
    XCTAssertEqual(runs.count, 3)
    XCTAssertEqual(result.error as? TestError, TestError(3))
  }

  func testWorkMayReturnPendingPromise() throws {
    let result = retry(on: queue.queue, attempts: 1, delay: 0.001) {
      Promise<Int>(on: .global()) { 5 }
    }
    XCTAssertEqual(try wait(for: result, timeout: 2), 5)
  }

  func testWorkAndConditionRunOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    retry(
      on: q.queue, attempts: 1, delay: 0.001,
      condition: { _, _ in
        onQueue.append(q.isCurrent)
        return true
      }
    ) { () -> Promise<Int> in
      onQueue.append(q.isCurrent)
      return Promise(TestError())
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true, true, true])
  }

  func testFirstRunIsNotInline() {
    let runs = Recorder<Int>()
    retry(on: .main, attempts: 0, work(failing: 0, runs: runs))
    XCTAssertEqual(runs.count, 0, "ran inline")
    settle()
    XCTAssertEqual(runs.count, 1)
  }

  func testPromiseLivesUntilResolvedThenIsReleased() {
    let gate = Promise<Int>()
    weak var weakResult: Promise<Int>?
    do {
      let result = retry(on: queue.queue, attempts: 1, delay: 0.001) { gate }
      weakResult = result
    }
    runBriefly()
    XCTAssertNotNil(weakResult)
    gate.fulfill(1)
    settle()
    XCTAssertNil(weakResult)
  }
}
