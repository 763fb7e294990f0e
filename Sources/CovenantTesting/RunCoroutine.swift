import Covenant
import Foundation

/// Runs `body` as a coroutine on `scheduler` and waits for it; returns what `body` returns or
/// rethrows what it throws.
///
/// Called on the main queue (XCTest methods on the main thread, `@MainActor` tests) with the
/// default `DispatchQueue.main`, the coroutine's slices are run by the waiting loop itself, on
/// the calling thread, so they cannot deadlock with it; on the main thread the loop also keeps
/// the main run loop turning, so promise blocks dispatched to `.main` still run. Called
/// elsewhere, it blocks the calling thread until `body` is done.
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
/// capture whatever the test has (it need not be `Sendable`). Do not call it from a serial
/// queue that `scheduler` needs (other than the main queue, handled as above): that deadlocks
/// until the timeout.
///
/// - Throws: `body`'s error; `WaitTimeoutError` if `body` has not finished after `timeout`
///   seconds (naming `file`:`line`, the caller's line by default) — the coroutine is then
///   cancelled, so its pending `await` throws `CoroutineError.canceled`.
public func runCoroutine<T>(
  on scheduler: any CoroutineScheduler = DispatchQueue.main,
  timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line,
  _ body: @escaping () throws -> T
) throws -> T {
  let outcome = InlineMutex<TransferredResult<T>?>(nil)
  let wakeup = DispatchSemaphore(value: 0)
  let task = TransferredBody(body)
  let scope = CoScope()
  let onMainThread = Thread.isMainThread
  // On the main thread, a main-queue block makes `RunLoop.run` return, so the loop below looks
  // at the stand-in's tasks at once; elsewhere the semaphore does that.
  let wake: @Sendable () -> Void
  if onMainThread {
    wake = { DispatchQueue.main.async(execute: {}) }
  } else {
    wake = { _ = wakeup.signal() }
  }
  var standIn: MainQueueStandIn?
  if MainQueueStandIn.isMainQueue(scheduler), MainQueueStandIn.isOnMainQueue {
    standIn = MainQueueStandIn(wake: wake)
  }
  let runOn: any CoroutineScheduler = standIn ?? scheduler
  runOn.startCoroutine(in: scope) {
    let result = Result { try task.body() }
    outcome.withLock { $0 = TransferredResult(result) }
    wake()
  }
  let deadline = Date(timeIntervalSinceNow: max(0, timeout))
  while true {
    standIn?.drain()
    if outcome.withLock({ $0 != nil }) || Date() >= deadline { break }
    if onMainThread {
      // Keep the main run loop turning: promise blocks run on `.main` by default.
      _ = RunLoop.current.run(
        mode: .default, before: min(deadline, Date(timeIntervalSinceNow: 0.002)))
    } else {
      _ = wakeup.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow))
    }
  }
  standIn?.stop()
  guard let result = outcome.withLock({ $0.take() }) else {
    scope.cancel()
    throw WaitTimeoutError(
      subject: "runCoroutine body", timeout: timeout, file: file, line: line)
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
