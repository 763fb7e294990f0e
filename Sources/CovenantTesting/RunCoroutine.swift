import Covenant
import Foundation
import Synchronization

/// Runs `body` as a coroutine on `scheduler` and waits for it, running the current run loop
/// meanwhile (so the default `DispatchQueue.main` works when called from the main thread, as
/// test methods are); returns what `body` returns or rethrows what it throws.
///
/// ```swift
/// func testLoadsUser() throws {                      // XCTest
///   let name = try runCoroutine { try api.fetchUser(id: 1).await().name }
///   XCTAssertEqual(name, "Ada")
/// }
///
/// @Test func loadsUser() throws {                    // Swift Testing
///   #expect(try runCoroutine(on: DispatchQueue.global()) { try api.user(1).await() } == user)
/// }
/// ```
///
/// Like `DispatchQueue.sync`, the helper returns only once `body` has finished, so `body` may
/// capture whatever the test has (it need not be `Sendable`); it must not be called from
/// `scheduler`'s own serial thread other than the main thread, which it keeps running.
///
/// - Throws: `body`'s error; `WaitTimeoutError` if `body` has not finished after `timeout`
///   seconds — the coroutine is then cancelled, so its pending `await` throws
///   `CoroutineError.canceled`.
public func runCoroutine<T>(
  on scheduler: any CoroutineScheduler = DispatchQueue.main,
  timeout: TimeInterval = 10,
  _ body: @escaping () throws -> T
) throws -> T {
  let outcome = Mutex<TransferredResult<T>?>(nil)
  let task = TransferredBody(body)
  let scope = CoScope()
  scheduler.startCoroutine(in: scope) {
    let result = Result { try task.body() }
    outcome.withLock { $0 = TransferredResult(result) }
  }
  let finished = spinRunLoop(until: Date(timeIntervalSinceNow: max(0, timeout))) {
    outcome.withLock { $0 != nil }
  }
  guard finished, let result = outcome.withLock({ $0.take() }) else {
    scope.cancel()
    throw WaitTimeoutError(subject: "runCoroutine body", timeout: timeout)
  }
  return try result.result.get()
}

/// The body handed to the coroutine. `@unchecked Sendable`: `runCoroutine` does not return
/// before the coroutine is done with it (or, after a timeout, abandons it to the cancelled
/// coroutine), so it is used by one thread at a time.
private struct TransferredBody<T>: @unchecked Sendable {
  let body: () throws -> T
  init(_ body: @escaping () throws -> T) { self.body = body }
}

/// The body's outcome, moved once from the coroutine to the waiting thread under a mutex.
private struct TransferredResult<T>: @unchecked Sendable {
  let result: Result<T, any Error>
  init(_ result: Result<T, any Error>) { self.result = result }
}
