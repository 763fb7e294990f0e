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

  /// Whether the calling code runs inside a coroutine (so that it may wait).
  @usableFromInline
  static var isInsideCoroutine: Bool { CoroutineContext.currentUnmanaged != nil }

  /// `CoroutineContext.suspend`: waits until a waker handed to `register` wins and wakes it.
  ///
  /// `kind` and `detail` say what the wait is for, in coroutine snapshots (see
  /// `CoroutineWaitKind`).
  @usableFromInline
  func suspend(
    _ kind: CoroutineWaitKind, detail: UInt = 0, _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) {
    try context.suspend(kind, detail: detail, register)
  }

  /// Suspends the current coroutine until `cell` is resolved, registering the coroutine itself
  /// in the cell (one lock round trip to register, none on the fast path).
  ///
  /// The coroutine is used unretained: its own first frame keeps it alive while its body runs.
  /// - Throws: `CoroutineError.calledOutsideCoroutine` outside a coroutine;
  ///   `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  ///
  /// `type` is the awaited promise's or future's type, for coroutine snapshots.
  @usableFromInline
  static func awaitCurrent(
    resolutionOf cell: borrowing ResolutionCell, awaiting type: Any.Type
  ) throws(CoroutineError) {
    try CoroutineContext.awaitCurrent(resolutionOf: cell, awaiting: type)
  }

  /// `awaitCurrent(resolutionOf:)` that gives up after `timeout`; returns true if it did (the
  /// cell is left alone, and the coroutine's registration leaves its chain).
  @usableFromInline
  static func awaitCurrent(
    resolutionOf cell: borrowing ResolutionCell, awaiting type: Any.Type,
    timeout: DispatchTimeInterval
  ) throws(CoroutineError) -> Bool {
    guard let coroutine = CoroutineContext.currentUnmanaged else {
      throw .calledOutsideCoroutine
    }
    return try coroutine._withUnsafeGuaranteedRef { coroutine in
      Result { () throws(CoroutineError) in
        try coroutine.awaitResolution(of: cell, awaiting: type, timeout: timeout)
      }
    }.get()
  }

  /// Now, in nanoseconds, on the clock of the coroutine's scheduler's timers
  /// (`CoroutineContext.schedulerClockNanoseconds`).
  @usableFromInline
  func clockNanoseconds() -> UInt64 { context.schedulerClockNanoseconds }

  /// `suspend` that also ends when `timeout` expires; returns true if it did (no resumer won).
  @usableFromInline
  func suspend(
    _ kind: CoroutineWaitKind, timeout: DispatchTimeInterval,
    _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) -> Bool {
    try context.suspend(kind, timeout: timeout, register)
  }
}
