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

/// An error type of a layer below the coroutines' whose values may only say that something was
/// cancelled (`CoChannelError.canceled`, `CoFutureError.canceled`): `Error.isCancellation` asks
/// it, and a coroutine whose body throws one was cancelled, and nothing is reported.
protocol CancellationReporting: Error {
  /// Whether this error says that something was cancelled.
  var reportsCancellation: Bool { get }
}
