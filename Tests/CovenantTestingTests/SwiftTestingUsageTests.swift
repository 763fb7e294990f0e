import Covenant
import CovenantTesting
import Foundation
import Testing

private struct UsageError: Error, Equatable {}

/// CovenantTesting from Swift Testing: the same helpers, no XCTest involved.
///
/// Swift Testing runs tests concurrently on the cooperative pool; `@MainActor` tests run on the
/// main queue, which `runCoroutine` (default scheduler `DispatchQueue.main`) handles by running
/// the coroutine's slices itself while it waits.
@Suite struct SwiftTestingUsageTests {
  @Test func waitsForAPromise() throws {
    #expect(try wait(for: Promise<Int>(on: .global()) { 41 + 1 }) == 42)
  }

  @Test func waitsForAFuture() throws {
    let future = DispatchQueue.global().coroutineFuture { () throws -> String in
      try Coroutine.delay(.milliseconds(2))
      return "done"
    }
    #expect(try wait(for: future, timeout: 5) == "done")
  }

  @Test func rejectionIsRethrown() {
    #expect(throws: UsageError.self) { try wait(for: Promise<Int>(UsageError())) }
  }

  @Test func runsACoroutineOnAGlobalQueue() throws {
    let value = try runCoroutine(on: DispatchQueue.global()) {
      try Promise(2).await() * 3
    }
    #expect(value == 6)
  }

  @MainActor
  @Test func runsACoroutineOnTheMainQueue() throws {
    // The test itself holds the main queue (the main actor); the default `.main` scheduler
    // still works because `runCoroutine` runs the coroutine's slices while it waits.
    let value = try runCoroutine { () throws -> Int in
      dispatchPrecondition(condition: .onQueue(.main))
      try Coroutine.delay(.milliseconds(1))
      dispatchPrecondition(condition: .onQueue(.main))
      return try Promise(5).await()
    }
    #expect(value == 5)
  }

  @Test func runCoroutineRethrows() {
    #expect(throws: UsageError.self) {
      try runCoroutine(on: DispatchQueue.global()) { () throws -> Int in throw UsageError() }
    }
  }

  @Test func timeoutIsAnError() {
    #expect(throws: WaitTimeoutError.self) {
      try runCoroutine(on: DispatchQueue.global(), timeout: 0.02) {
        try CoPromise<Void>().await()
      }
    }
  }

  @Test func noPromiseLeftPending() throws {
    _ = try wait(for: Promise<Int>(on: .global()) { 1 })
    try expectNoPendingPromises(timeout: 5)
  }
}
