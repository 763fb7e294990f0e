import Dispatch

/// The current coroutine, as seen by the `@inlinable` (client-specialized) code of futures and
/// channels: a non-generic bridge to `CoroutineContext`, so that generic hot paths can be
/// specialized in client modules while the coroutine machinery stays internal.
@usableFromInline
struct CoroutineHandle {
  let context: CoroutineContext

  /// The coroutine running this code, or `CoroutineError.calledOutsideCoroutine`.
  @usableFromInline
  static func current() throws(CoroutineError) -> CoroutineHandle {
    CoroutineHandle(context: try CoroutineContext.requireCurrent())
  }

  /// `CoroutineContext.suspend`: waits until a waker handed to `register` wins and wakes it.
  @usableFromInline
  func suspend(_ register: (CoroutineWaker) -> Void) throws(CoroutineError) {
    try context.suspend(register)
  }

  /// Suspends the current coroutine until `cell` is resolved, registering the coroutine's
  /// reusable `AwaitReaction` in the cell itself (one lock round trip to register, none on the
  /// fast path).
  ///
  /// The coroutine is used unretained: its own first frame keeps it alive while its body runs.
  /// - Throws: `CoroutineError.calledOutsideCoroutine` outside a coroutine;
  ///   `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  @usableFromInline
  static func awaitCurrent(resolutionOf cell: borrowing ResolutionCell) throws(CoroutineError) {
    try CoroutineContext.awaitCurrent(resolutionOf: cell)
  }

  /// `suspend` that gives up after `timeout`, throwing `CoFutureError.timeout`.
  @usableFromInline
  func suspend(
    timeout: DispatchTimeInterval, _ register: (CoroutineWaker) -> Void
  ) throws {
    try context.suspendUntil(timeout: timeout, register)
  }
}
