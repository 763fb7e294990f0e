extension Error {
  /// Whether the error only says that something was cancelled: `CoroutineError.canceled`,
  /// `CoFutureError.canceled`, `CoChannelError.canceled`, or Swift's `CancellationError`.
  ///
  /// One test for "stop, we were cancelled" against "this failed", whichever layer noticed:
  ///
  /// ```swift
  /// do {
  ///   try crawl(url)
  /// } catch where error.isCancellation {
  ///   return                                      // shutting down: not a failure
  /// } catch {
  ///   failures.append((url, error))
  /// }
  /// ```
  ///
  /// False for timeouts (`CoFutureError.timeout`, `PromiseError.timedOut`) and for a closed
  /// channel (`CoChannelError.closed`): those are outcomes of the work itself, which may be
  /// retried or handled. Errors thrown out of coroutine bodies for which this is true are not
  /// reported to the uncaught-error handlers.
  public var isCancellation: Bool {
    switch self as any Error {
    case CoroutineError.canceled: return true
    case is CancellationError: return true
    // The futures' and channels' errors, of layers below this one, say it themselves.
    default: return (self as? any CancellationReporting)?.reportsCancellation ?? false
    }
  }
}
