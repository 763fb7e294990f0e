/// An error thrown out of the body of a coroutine started with `startCoroutine` (or
/// `Coroutine.start`), which nothing else receives: what the uncaught-error handlers are given.
///
/// Errors that report a cancellation (those for which `isCancellation` is true:
/// `CoroutineError.canceled`, `CoChannelError.canceled`, `CoFutureError.canceled`, Swift's
/// `CancellationError`) end a cancelled coroutine normally and are not reported. Errors of
/// `coroutineFuture` and `CoFuture(task:)` bodies are not either: they fail the future.
public struct UncaughtCoroutineError: Error, CustomStringConvertible, @unchecked Sendable {
  // `@unchecked Sendable`: `error` was thrown by a coroutine that has ended; nothing else holds
  // it, so handing it to the handler's thread shares nothing.

  /// What the body threw.
  public let error: any Error
  /// The file of the `startCoroutine` call that started the coroutine (`#fileID` form).
  public let file: StaticString
  /// The line of that call.
  public let line: UInt

  /// Creates the report of `error`, thrown by a coroutine started at `file`:`line`.
  public init(error: any Error, file: StaticString, line: UInt) {
    self.error = error
    self.file = file
    self.line = line
  }

  /// `"<error> (coroutine started at <file>:<line>)"`.
  public var description: String {
    line == 0
      ? "\(error) (coroutine started at an unknown place)"
      : "\(error) (coroutine started at \(file):\(line))"
  }
}
