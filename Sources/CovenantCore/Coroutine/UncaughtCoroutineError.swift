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

/// The start site of a coroutine started through a function value of an exact SwiftCoroutine
/// signature (which has no `file` / `line` parameters); its line is 0.
@usableFromInline let unknownStartFile: StaticString = "?"

extension Coroutine {
  /// The process-wide handler of errors thrown out of `startCoroutine` bodies; it runs on the
  /// coroutine's thread, right after the body has thrown. A scope's own handler
  /// (`CoScope.uncaughtErrorHandler`) takes precedence for coroutines started in it.
  ///
  /// The default writes `Covenant: uncaught error …` with the error and the coroutine's start
  /// site to stderr in debug builds of Covenant, and does nothing in release builds. Replace it
  /// to log, count, or stop the program:
  ///
  /// ```swift
  /// Coroutine.uncaughtErrorHandler = { failure in
  ///   logger.error("coroutine failed: \(failure)")
  /// }
  /// ```
  public static var uncaughtErrorHandler: @Sendable (UncaughtCoroutineError) -> Void {
    get { UncaughtErrors.handler.withCriticalSection { $0 } }
    set { UncaughtErrors.handler.withCriticalSection { $0 = newValue } }
  }

  /// Writes `failure` to stderr as the default handler does (in any build): for handlers that
  /// add to the default instead of replacing it.
  public static func writeToStandardError(_ failure: UncaughtCoroutineError) {
    writeLineToStandardError("Covenant: uncaught error \(failure)")
  }
}

/// The process-wide uncaught-error handler and the delivery of uncaught errors.
enum UncaughtErrors {
  static let handler = InlineMutex<@Sendable (UncaughtCoroutineError) -> Void>(defaultHandler)

  static let defaultHandler: @Sendable (UncaughtCoroutineError) -> Void = { failure in
    #if DEBUG
      Coroutine.writeToStandardError(failure)
    #endif
  }

  /// Hands `error`, thrown out of a body started at `file`:`line`, to the nearest handler: the
  /// scope's (or an enclosing scope's), else the process-wide one. Cancellations are dropped.
  static func report(_ error: any Error, scope: CoScope?, file: StaticString, line: UInt) {
    guard !error.isCancellation else { return }
    let failure = UncaughtCoroutineError(error: error, file: file, line: line)
    if let handler = scope?.nearestUncaughtErrorHandler {
      handler(failure)
    } else {
      Coroutine.uncaughtErrorHandler(failure)
    }
  }
}
