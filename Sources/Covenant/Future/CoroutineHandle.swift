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

  /// `CoroutineContext.suspend`: waits until a resumer handed to `register` wins and wakes it.
  @usableFromInline
  func suspend(_ register: (CoroutineResumer) -> Void) throws(CoroutineError) {
    try context.suspend { waker in register(CoroutineResumer(waker: waker)) }
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
    timeout: DispatchTimeInterval, _ register: (CoroutineResumer) -> Void
  ) throws {
    try context.suspendUntil(timeout: timeout) { waker in
      register(CoroutineResumer(waker: waker))
    }
  }
}

/// Resumes one particular wait of a coroutine, at most once: `CoroutineWaker` for inlinable
/// code. `claim()` wins the right to resume (inside a lock, if delivering something), then
/// `wake()` (outside it); `resume()` does both.
///
/// `@unchecked Sendable`: a waker is meant to be called from any thread; its state is atomic.
@usableFromInline
struct CoroutineResumer: @unchecked Sendable {
  let waker: CoroutineWaker

  @usableFromInline
  func claim() -> Bool { waker.claim() }

  @usableFromInline
  func wake() { waker.wake() }

  @usableFromInline
  @discardableResult
  func resume() -> Bool { waker.resume() }
}
