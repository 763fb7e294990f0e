import CCoroutineContext

extension CoroutineContext {
  /// `suspend(_:detail:_:)` for a coroutine that is already cancelled and must still wait for
  /// something that cannot be stopped (a blocking pool closure that has started: the caller's
  /// closure context and result must outlive it). The same wait state, generation and claim,
  /// without the cancellation check: a cancelled coroutine is never claimed by `cancel()`
  /// again (its flag is set once), so only a waker handed to `register` ends this wait.
  ///
  /// - Precondition: the coroutine is cancelled (else a `cancel()` arriving now would claim the
  ///   wait, and it would return early: callers check what they waited for and wait again).
  func suspendUninterruptibly(
    _ kind: CoroutineWaitKind, detail: UInt = 0, _ register: (CoroutineWaker) -> Void
  ) {
    ResolutionDrain.tellQueuedBeforeWaiting()
    let generation = wait.currentGeneration &+ 1
    wait.begin(generation)
    register(CoroutineWaker(coroutine: self, generation: generation))
    noteWait(kind, detail: detail)
    if wait.flags & WaitState.woken == 0 {
      exit = .suspend
      cov_fiber_suspend()
    }
  }
}
