import Dispatch

/// The wake-up of one wait of one coroutine (`Coroutine.awaitWakeUp`), for code that keeps its
/// waiting coroutines in its own state — an I/O integration's buffers, say — instead of in a
/// callback: handing it out, storing it and resuming it allocate nothing.
///
/// It is the same exactly-once machinery as every other await: the first of `resume()`, the
/// wait's timeout and a cancel of the coroutine ends the wait; every later call does nothing.
/// A wake-up kept after its wait ended (an old one left in a field) can never touch a later
/// wait of the same coroutine.
///
/// `@unchecked Sendable`: it is one coroutine reference and the number of its wait; resuming is
/// atomic and may happen on any thread.
public struct CoroutineWakeUp: @unchecked Sendable {
  @usableFromInline let waker: CoroutineWaker

  init(_ waker: CoroutineWaker) { self.waker = waker }

  /// Ends the wait this wake-up was made for, unless something else already ended it (an
  /// earlier `resume()`, its timeout, a cancel). Returns whether this call ended it. The
  /// coroutine continues on its scheduler, never inside this call.
  @discardableResult
  public func resume() -> Bool { waker.resume() }
}

extension Coroutine {
  /// Suspends the current coroutine until the `CoroutineWakeUp` handed to `register` is resumed,
  /// or `timeout` passes; returns `true` when it was woken, `false` when the timeout ended the
  /// wait first.
  ///
  /// `register` runs before the coroutine switches out and may resume the wake-up at once (the
  /// coroutine then does not switch out). The timer is the coroutine's scheduler's (as for
  /// every Covenant timeout) and is cancelled when the wait ends. A wake-up that is never
  /// resumed leaves the coroutine suspended until it is cancelled.
  ///
  /// ```swift
  /// // A waiter slot in an object owned by one thread (an event loop's handler):
  /// var waiter: CoroutineWakeUp?
  /// _ = try Coroutine.awaitWakeUp { waiter = $0 }        // the coroutine waits here
  /// // elsewhere, on that thread:
  /// waiter.take()?.resume()
  /// ```
  ///
  /// `waitingFor` names what is awaited in coroutine snapshots (`callback(valueType:)`).
  /// - Throws: `CoroutineError.calledOutsideCoroutine` outside a coroutine;
  ///   `CoroutineError.canceled` if the coroutine is, or becomes, cancelled before a wake-up.
  public static func awaitWakeUp(
    timeout: DispatchTimeInterval = .never, waitingFor type: Any.Type = Void.self,
    _ register: (CoroutineWakeUp) -> Void
  ) throws -> Bool {
    let coroutine = try CoroutineContext.requireCurrent()
    let timedOut = try coroutine.suspend(
      .callback, detail: metadataBits(type), timeout: timeout
    ) { waker in register(CoroutineWakeUp(waker)) }
    return !timedOut
  }
}
