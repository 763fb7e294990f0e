import Covenant
import CovenantTesting
import Foundation
import XCTest

private struct BridgeError: Error, Equatable {}

final class ConcurrencyFutureTests: XCTestCase {
  // MARK: CoFuture.get()

  func testGetReturnsValue() async throws {
    let value = try await CoFuture(result: .success(3)).get()
    XCTAssertEqual(value, 3)
  }

  func testGetWaitsForPendingFuture() async throws {
    let promise = CoPromise<Int>()
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { promise.success(11) }
    let value = try await promise.get()
    XCTAssertEqual(value, 11)
  }

  func testGetThrowsFailure() async {
    let promise = CoPromise<Int>()
    DispatchQueue.global().async { promise.fail(BridgeError()) }
    do {
      _ = try await promise.get()
      XCTFail("expected a throw")
    } catch {
      XCTAssertEqual(error as? BridgeError, BridgeError())
    }
  }

  func testGetOfCoroutineFuture() async throws {
    let future = DispatchQueue.global().coroutineFuture { () throws -> Int in
      try Coroutine.delay(.milliseconds(5))
      return 8
    }
    let value = try await future.get()
    XCTAssertEqual(value, 8)
  }

  func testTaskCancellationCancelsTheFuture() async throws {
    let promise = CoPromise<Int>()
    let task = Task { try await promise.get() }
    try await Task.sleep(nanoseconds: 20_000_000)
    task.cancel()
    do {
      _ = try await task.value
      XCTFail("expected a throw")
    } catch {
      XCTAssertEqual(error as? CoFutureError, .canceled)
    }
    XCTAssertTrue(promise.isCanceled)
  }

  func testTaskCancellationCancelsTheCoroutineBehindTheFuture() async throws {
    let coroutineError = Box<(any Error)?>(nil)
    let ended = CoPromise<Void>()
    let future = DispatchQueue.global().coroutineFuture { () throws -> Int in
      defer { ended.success() }
      do {
        try Coroutine.delay(.seconds(30))
      } catch {
        coroutineError.value = error
        throw error
      }
      return 1
    }
    let task = Task { try await future.get() }
    try await Task.sleep(nanoseconds: 20_000_000)
    task.cancel()
    _ = try? await task.value
    try await ended.get()
    XCTAssertEqual(coroutineError.value as? CoroutineError, .canceled)
  }

  func testAlreadyCancelledTaskGetsCompletedValue() async throws {
    let future = CoFuture(result: .success(5))
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await future.get()
    }
    let value = try await task.value
    XCTAssertEqual(value, 5)
  }

  // MARK: CoFuture(operation:)

  func testOperationCompletesFuture() throws {
    let future = CoFuture<Int>(operation: {
      try await Task.sleep(nanoseconds: 1_000_000)
      return 12
    })
    XCTAssertEqual(try wait(for: future, timeout: 5), 12)
  }

  func testOperationFailsFuture() {
    let future = CoFuture<Int>(operation: { throw BridgeError() })
    XCTAssertThrowsError(try wait(for: future, timeout: 5)) {
      XCTAssertEqual($0 as? BridgeError, BridgeError())
    }
  }

  func testCancellingFutureCancelsTheTask() throws {
    let sawCancellation = CoPromise<Bool>()
    let running = DispatchSemaphore(value: 0)
    let future = CoFuture<Int>(operation: {
      running.signal()
      do {
        try await Task.sleep(nanoseconds: 30_000_000_000)
        sawCancellation.success(false)
      } catch {
        sawCancellation.success(error is CancellationError)
      }
      return 0
    })
    running.wait()
    future.cancel()
    XCTAssertTrue(try wait(for: sawCancellation, timeout: 5))
    XCTAssertThrowsError(try wait(for: future, timeout: 5)) {
      XCTAssertEqual($0 as? CoFutureError, .canceled)
    }
  }

  func testOperationFutureAwaitedFromCoroutine() throws {
    let value = try runCoroutine(on: DispatchQueue.global()) {
      try CoFuture<String>(operation: { "from a task" }).await()
    }
    XCTAssertEqual(value, "from a task")
  }
}
