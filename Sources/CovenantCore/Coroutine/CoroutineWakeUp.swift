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
/// atomic and may happen on any thread. Two wake-ups are equal when they wake the same wait.
public struct CoroutineWakeUp: @unchecked Sendable, Equatable {
  @usableFromInline let waker: CoroutineWaker

  init(_ waker: CoroutineWaker) { self.waker = waker }

  /// Whether the wait is still open: not yet ended by a `resume()`, its timeout or a cancel.
  /// Lets the keeper of a waiter slot tell a live waiter from one that left it (cancelled, say)
  /// and has not run yet to clear the slot. The answer may be stale at once when another
  /// thread can end the wait (a cancel); a `false` is final.
  public var isWaiting: Bool {
    let wait = waker.coroutine
    // The generation before and after the flags: generations only grow, so equal ones mean
    // the flags belong to this wait.
    guard wait.wait.currentGeneration == waker.generation else { return false }
    let unclaimed = wait.wait.flags & WaitState.claimed == 0
    return unclaimed && wait.wait.currentGeneration == waker.generation
  }

  /// Whether `lhs` and `rhs` wake the same wait of the same coroutine.
  public static func == (lhs: CoroutineWakeUp, rhs: CoroutineWakeUp) -> Bool {
    lhs.waker.coroutine === rhs.waker.coroutine && lhs.waker.generation == rhs.waker.generation
  }

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

extension Coroutine {
  /// Whether the calling code runs in a coroutine whose scheduler is `scheduler` (the same
  /// object) — when `scheduler.await { … }` would run its block in place. A load and a
  /// comparison, no reference counting: for integrations whose state is confined to one
  /// scheduler (CovenantNIO's channels, on their event loop) and that check it on every call.
  public static func isRunning(on scheduler: AnyObject) -> Bool {
    guard let current = CoroutineContext.currentUnmanaged else { return false }
    let identity = current._withUnsafeGuaranteedRef { $0.currentSchedulerIdentity }
    return identity == ObjectIdentifier(scheduler)
  }
}

extension Coroutine {
  /// Runs `body` as a task of `scheduler` on the calling thread: the first coroutine of
  /// `scheduler` that `body` makes ready (a `CoroutineWakeUp.resume()`, a fulfilled promise it
  /// awaits) continues right after `body` returns, inside this call, instead of going through
  /// `scheduler.scheduleTask` — no closure is made for it, so waking it allocates nothing.
  /// Further coroutines it wakes go through `scheduleTask` as usual.
  ///
  /// For integrations whose callbacks already run where `scheduler` runs its tasks (an event
  /// loop's own I/O callbacks, for the loop's scheduler): the woken coroutine continues in that
  /// callback, which must be a place where the scheduler may run its work.
  /// - Precondition: the calling thread is one `scheduler` runs its tasks on, and runs none of
  ///   them right now other than the caller (not checked: a coroutine would run out of turn).
  public static func runAsTask(of scheduler: AnyObject, _ body: () -> Void) {
    SchedulerTurn.run(as: ObjectIdentifier(scheduler), body)
  }
}
