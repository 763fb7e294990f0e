import Covenant
import CovenantTesting
import Foundation
import XCTest

private struct BridgeError: Error, Equatable {}

/// A value type that is not `Sendable`, to show the bridges accept one.
private final class NotSendable {
  var value = 0
}

final class ConcurrencyPromiseTests: XCTestCase {
  // MARK: Promise.get()

  func testGetReturnsValueOfResolvedPromise() async throws {
    let value = try await Promise(7).get()
    XCTAssertEqual(value, 7)
  }

  func testGetWaitsForPendingPromise() async throws {
    let promise = Promise<String>.pending()
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { promise.fulfill("late") }
    let value = try await promise.get()
    XCTAssertEqual(value, "late")
  }

  func testGetThrowsRejection() async {
    let promise = Promise<Int>.pending()
    DispatchQueue.global().async { promise.reject(BridgeError()) }
    do {
      _ = try await promise.get()
      XCTFail("expected a throw")
    } catch {
      XCTAssertEqual(error as? BridgeError, BridgeError())
    }
  }

  func testGetOfNonSendableValueFromMainActor() async throws {
    let promise = Promise<NotSendable>(on: .global()) { NotSendable() }
    let object = try await promise.get()
    object.value += 1
    XCTAssertEqual(object.value, 1)
  }

  func testTaskCancellationLeavesPromiseToResolve() async throws {
    let promise = Promise<Int>.pending()
    let started = Promise<Void>.pending()
    let task = Task {
      started.fulfill(())
      return try await promise.get()
    }
    try await started.get()
    task.cancel()
    try await Task.sleep(nanoseconds: 20_000_000)
    XCTAssertTrue(promise.isPending, "cancelling the task does not touch the promise")
    promise.fulfill(42)
    let value = try await task.value
    XCTAssertEqual(value, 42, "get() returns the promise's outcome once it resolves")
  }

  // MARK: Promise(operation:)

  func testOperationFulfills() throws {
    let promise = Promise<Int>(operation: {
      try await Task.sleep(nanoseconds: 1_000_000)
      return 5
    })
    XCTAssertEqual(try wait(for: promise, timeout: 5), 5)
  }

  func testOperationRejects() {
    let promise = Promise<Int>(operation: { throw BridgeError() })
    XCTAssertThrowsError(try wait(for: promise, timeout: 5)) { error in
      XCTAssertEqual(error as? BridgeError, BridgeError())
    }
  }

  func testOperationPromiseStaysAliveUntilResolved() throws {
    weak var weakPromise: Promise<Int>?
    let release = DispatchSemaphore(value: 0)
    do {
      let promise = Promise<Int>(operation: {
        await withCheckedContinuation { continuation in
          DispatchQueue.global().async {
            release.wait()
            continuation.resume()
          }
        }
        return 20
      })
      weakPromise = promise
    }
    XCTAssertNotNil(weakPromise, "kept alive by its running task")
    let promise = try XCTUnwrap(weakPromise)
    release.signal()
    XCTAssertEqual(try wait(for: promise, timeout: 5), 20)
  }

  func testPlainTrailingClosureStillSelectsTheWorkBlockInitializer() throws {
    // `Promise { … }` without `await` is google/promises' `Do` initializer on
    // `DispatchQueue.promises` (main), not `init(operation:)`.
    let onMain = Promise<Bool> { Thread.isMainThread }
    let async = Promise<Int> { fulfill, _ in fulfill(Thread.isMainThread ? 1 : 0) }
    XCTAssertEqual(try wait(for: onMain, timeout: 5), true)
    XCTAssertEqual(try wait(for: async, timeout: 5), 1)
  }

  func testTrailingClosurePromiseInitializersStayUnambiguous() throws {
    // google/promises' work-block initializers keep their meaning next to `init(operation:)`.
    let sync = Promise<Int>(on: .global()) { 1 }
    let async = Promise<Int>(on: .global()) { fulfill, _ in fulfill(2) }
    let bridged = Promise<Int> { try await Promise(3).get() }
    XCTAssertEqual(try wait(for: sync, timeout: 5), 1)
    XCTAssertEqual(try wait(for: async, timeout: 5), 2)
    XCTAssertEqual(try wait(for: bridged, timeout: 5), 3)
  }
}
