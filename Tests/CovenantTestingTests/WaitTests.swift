import Covenant
import CovenantTesting
import Foundation
import XCTest

private struct WaitTestError: Error, Equatable {}

/// CovenantTesting from XCTest (test methods run on the main thread here).
final class WaitTests: XCTestCase {
  func testWaitReturnsValue() throws {
    XCTAssertEqual(try wait(for: Promise(3), timeout: 1), 3)
  }

  func testWaitForPromiseResolvedOnTheMainQueue() throws {
    let promise = Promise<String>.pending()
    DispatchQueue.main.async { promise.fulfill("main") }
    XCTAssertEqual(try wait(for: promise), "main")
  }

  func testWaitForPromiseRethrows() {
    XCTAssertThrowsError(try wait(for: Promise<Int>(WaitTestError()), timeout: 1)) {
      XCTAssertEqual($0 as? WaitTestError, WaitTestError())
    }
  }

  func testWaitForPromiseTimesOut() {
    let promise = Promise<Int>.pending()
    XCTAssertThrowsError(try wait(for: promise, timeout: 0.05)) { error in
      let timeout = error as? WaitTimeoutError
      XCTAssertNotNil(timeout)
      XCTAssertEqual(timeout?.timeout, 0.05)
      XCTAssertTrue("\(error)".contains("did not finish within 0.05 seconds"), "\(error)")
    }
    promise.fulfill(0)
  }

  func testWaitForFuture() throws {
    let future = DispatchQueue.global().coroutineFuture { () throws -> Int in
      try Coroutine.delay(.milliseconds(5))
      return 4
    }
    XCTAssertEqual(try wait(for: future), 4)
  }

  func testWaitForFutureCompletedOnTheMainQueue() throws {
    let promise = CoPromise<Int>()
    DispatchQueue.main.async { promise.success(6) }
    XCTAssertEqual(try wait(for: promise, timeout: 5), 6)
  }

  func testWaitForFutureRethrowsAndTimesOut() {
    XCTAssertThrowsError(try wait(for: CoFuture<Int>(result: .failure(WaitTestError())))) {
      XCTAssertEqual($0 as? WaitTestError, WaitTestError())
    }
    let pending = CoPromise<Int>()
    XCTAssertThrowsError(try wait(for: pending, timeout: 0.05)) {
      XCTAssertTrue($0 is WaitTimeoutError)
    }
    XCTAssertNil(pending.result, "the future is left alone")
  }

  // MARK: runCoroutine

  func testRunCoroutineOnTheMainQueueFromTheMainThread() throws {
    XCTAssertTrue(Thread.isMainThread)
    let promise = Promise<Int>.pending()
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { promise.fulfill(20) }
    let result = try runCoroutine {
      let value = try promise.await()
      return (value + 1, Thread.isMainThread, Coroutine.isInsideCoroutine)
    }
    XCTAssertEqual(result.0, 21)
    XCTAssertTrue(result.1, "the body ran on the main queue")
    XCTAssertTrue(result.2)
  }

  func testRunCoroutineOnAnotherScheduler() throws {
    let queue = DispatchQueue(label: "runCoroutine")
    let value = try runCoroutine(on: queue, timeout: 5) { () throws -> Int in
      dispatchPrecondition(condition: .onQueue(queue))
      try Coroutine.delay(.milliseconds(2))
      return 7
    }
    XCTAssertEqual(value, 7)
  }

  func testRunCoroutineRethrows() {
    XCTAssertThrowsError(try runCoroutine { () throws -> Int in throw WaitTestError() }) {
      XCTAssertEqual($0 as? WaitTestError, WaitTestError())
    }
  }

  func testRunCoroutineTimesOutAndCancelsTheCoroutine() throws {
    let sawCancellation = CoPromise<Bool>()
    XCTAssertThrowsError(
      try runCoroutine(on: DispatchQueue.global(), timeout: 0.05) {
        do {
          try CoPromise<Void>().await()
        } catch {
          sawCancellation.success(error as? CoroutineError == .canceled)
          throw error
        }
      }
    ) { error in
      XCTAssertTrue(error is WaitTimeoutError)
      XCTAssertTrue("\(error)".contains("runCoroutine"), "\(error)")
    }
    XCTAssertTrue(try wait(for: sawCancellation, timeout: 5))
  }

  func testRunCoroutineBodyMayCaptureLocalState() throws {
    // Like `DispatchQueue.sync`, the body need not be `Sendable`.
    final class Accumulator { var total = 0 }
    let accumulator = Accumulator()
    try runCoroutine {
      for value in 1...3 { accumulator.total += try Promise(value).await() }
    }
    XCTAssertEqual(accumulator.total, 6)
  }

  func testNoPendingPromisesAfterwards() throws {
    let promise = Promise<Int>(on: .global()) { 1 }
    XCTAssertEqual(try wait(for: promise), 1)
    try expectNoPendingPromises()
  }
}
