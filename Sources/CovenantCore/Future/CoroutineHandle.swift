import Dispatch

/// The current coroutine, as seen by the `@inlinable` (client-specialized) code of futures and
/// channels: a non-generic bridge to `CoroutineContext`, so that generic hot paths can be
/// specialized in client modules while the coroutine machinery stays internal.
///
/// Only for code running inside the coroutine itself, which holds it unretained: the
/// coroutine's own first frame keeps it alive while its body runs.
@usableFromInline
struct CoroutineHandle {
  unowned(unsafe) let context: CoroutineContext

  /// The coroutine running this code, or `CoroutineError.calledOutsideCoroutine`.
  @usableFromInline
  static func current() throws(CoroutineError) -> CoroutineHandle {
    guard let current = CoroutineContext.currentUnmanaged else { throw .calledOutsideCoroutine }
    return current._withUnsafeGuaranteedRef { CoroutineHandle(context: $0) }
  }

  /// `CoroutineContext.suspend`: waits until a waker handed to `register` wins and wakes it.
  @usableFromInline
  func suspend(_ register: (CoroutineWaker) -> Void) throws(CoroutineError) {
    try context.suspend(register)
  }

  /// Suspends the current coroutine until `cell` is resolved, registering the coroutine itself
  /// in the cell (one lock round trip to register, none on the fast path).
  ///
  /// The coroutine is used unretained: its own first frame keeps it alive while its body runs.
  /// - Throws: `CoroutineError.calledOutsideCoroutine` outside a coroutine;
  ///   `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  @usableFromInline
  static func awaitCurrent(resolutionOf cell: borrowing ResolutionCell) throws(CoroutineError) {
    try CoroutineContext.awaitCurrent(resolutionOf: cell)
  }

  /// `awaitCurrent(resolutionOf:)` that gives up after `timeout`, throwing
  /// `CoFutureError.timeout` (the cell is left alone, and the coroutine's registration leaves
  /// its chain).
  @usableFromInline
  static func awaitCurrent(
    resolutionOf cell: borrowing ResolutionCell, timeout: DispatchTimeInterval
  ) throws {
    guard let coroutine = CoroutineContext.currentUnmanaged else {
      throw CoroutineError.calledOutsideCoroutine
    }
    let timedOut = try coroutine._withUnsafeGuaranteedRef { coroutine in
      Result { () throws(CoroutineError) in
        try coroutine.awaitResolution(of: cell, timeout: timeout)
      }
    }.get()
    if timedOut { throw CoFutureError.timeout }
  }

  /// `suspend` that also ends when `timeout` expires; returns true if it did (no resumer won).
  @usableFromInline
  func suspend(
    timeout: DispatchTimeInterval, _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) -> Bool {
    try context.suspend(timeout: timeout, register)
  }
}
