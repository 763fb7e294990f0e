import Covenant
import Foundation

/// The error the waiting helpers throw when what they wait for does not finish in time.
///
/// It names the line of the test that waited (`file`, `line`: the helper's caller, filled in by
/// the compiler), which its description ends with: a thrown error is reported by the test
/// framework where the test is (XCTest on Linux even says `<EXPR>:0`), not where it waited.
public struct WaitTimeoutError: Error, CustomStringConvertible, Sendable {
  /// What was being waited for.
  public let subject: String
  /// How long the helper waited, in seconds.
  public let timeout: TimeInterval
  /// The file of the call that waited (`#filePath` form).
  public let file: String
  /// The line of the call that waited.
  public let line: Int

  init(subject: String, timeout: TimeInterval, file: StaticString, line: UInt) {
    self.subject = subject
    self.timeout = timeout
    self.file = "\(file)"
    self.line = Int(line)
  }

  /// Describes the timeout, and where the test waited.
  public var description: String {
    "CovenantTesting: \(subject) did not finish within \(timeout) seconds"
      + " (waited at \(file):\(line))"
  }
}

/// Spins the current run loop (so main-queue blocks keep running) until `isDone()` or the
/// deadline; the one waiting loop behind every helper in this module.
func spinRunLoop(until deadline: Date, _ isDone: () -> Bool) -> Bool {
  while !isDone() {
    if Date() >= deadline { return isDone() }
    let slice = min(deadline, Date(timeIntervalSinceNow: 0.002))
    if Thread.isMainThread {
      _ = RunLoop.current.run(mode: .default, before: slice)
    } else {
      Thread.sleep(until: slice)
    }
  }
  return true
}

/// Waits for `promise` to resolve, running the current run loop meanwhile.
///
/// - Returns: the fulfilled value.
/// - Throws: the rejection error, or `WaitTimeoutError` after `timeout` seconds (naming
///   `file`:`line`, the caller's line by default).
///
/// ```swift
/// let user = try wait(for: api.fetchUser(id: 1))
/// ```
public func wait<T>(
  for promise: Promise<T>, timeout: TimeInterval = 10, file: StaticString = #filePath,
  line: UInt = #line
) throws -> T {
  let deadline = Date(timeIntervalSinceNow: max(0, timeout))
  guard spinRunLoop(until: deadline, { !promise.isPending }), let result = promise.result else {
    throw WaitTimeoutError(subject: "Promise<\(T.self)>", timeout: timeout, file: file, line: line)
  }
  return try result.get()
}

/// Waits for `future` to complete, running the current run loop meanwhile.
///
/// - Returns: the future's value.
/// - Throws: the future's error (`CoFutureError.canceled` if it was cancelled), or
///   `WaitTimeoutError` after `timeout` seconds (the future is left alone; the error names
///   `file`:`line`, the caller's line by default).
///
/// ```swift
/// let total = try wait(for: DispatchQueue.global().coroutineFuture { try sum.await() })
/// ```
public func wait<T>(
  for future: CoFuture<T>, timeout: TimeInterval = 10, file: StaticString = #filePath,
  line: UInt = #line
) throws -> T {
  let deadline = Date(timeIntervalSinceNow: max(0, timeout))
  guard spinRunLoop(until: deadline, { future.result != nil }), let result = future.result else {
    throw WaitTimeoutError(
      subject: "CoFuture<\(T.self)>", timeout: timeout, file: file, line: line)
  }
  return try result.get()
}
