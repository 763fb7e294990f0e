import CCoroutineContext

/// Suspending, on the coroutine's side: every wait opens a generation of `wait`
/// (`WaitState`), hands out a waker for it and switches out unless it was woken already; a
/// cancel is a claim of the current generation.
extension CoroutineContext {
  // MARK: Suspending (coroutine side)

  /// Suspends the coroutine until a waker handed to `register` resumes it.
  ///
  /// `register` runs on the coroutine before it switches out; it may resume synchronously.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled before a waker wins.
  ///
  /// `kind` and `detail` (see `CoroutineWaitKind`) say what the wait is for, in coroutine
  /// snapshots.
  @usableFromInline func suspend(
    _ kind: CoroutineWaitKind, detail: UInt = 0, _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) {
    let generation = try beginWait()
    register(CoroutineWaker(coroutine: self, generation: generation))
    noteWait(kind, detail: detail)
    try completeWait()
  }

  /// Records what the await now opening is for, for coroutine snapshots: the kind until the
  /// runner stores it with the switch-out, the detail in the fiber record at once.
  @inline(__always)
  func noteWait(_ kind: CoroutineWaitKind, timed: Bool = false, detail: UInt) {
    pendingWaitKind = kind.raw(timed: timed)
    // The coroutine runs, so its fiber exists.
    cov_fiber_note_wait_detail(fiber.unsafelyUnwrapped, detail)
  }

  /// Opens the next await (a new generation of `wait`) and returns its generation.
  /// - Throws: `.canceled` if the coroutine is cancelled.
  @inline(__always)
  func beginWait() throws(CoroutineError) -> UInt64 {
    // Before anything of this await: what it waits for may be queued on this stack.
    ResolutionDrain.tellQueuedBeforeWaiting()
    if canceled.load(ordering: .sequentiallyConsistent) { throw .canceled }
    // Only the coroutine itself opens generations: the word's own is the last one it opened.
    assert(isRunningHere, "only the coroutine itself waits")
    let generation = wait.currentGeneration &+ 1
    wait.begin(generation)
    // Pairs with `cancel()`: one of the two sees the other (both sequentially consistent).
    if canceled.load(ordering: .sequentiallyConsistent),
      wait.claim(generation, reason: WaitState.canceledWake)
    {
      _ = wait.wake()
      throw .canceled
    }
    return generation
  }

  /// Switches out unless the await was already woken; on return it has been.
  /// - Throws: `.canceled` if `cancel()` won the await.
  @inline(__always)
  func completeWait() throws(CoroutineError) {
    if wait.flags & WaitState.woken == 0 {
      exit = .suspend
      cov_fiber_suspend()
    }
    assert(wait.flags & WaitState.woken != 0, "a coroutine continues only once woken")
    if wait.flags & WaitState.canceledWake != 0 { throw .canceled }
  }

  /// Lets other work on the scheduler run, then continues.
  func yield() throws(CoroutineError) {
    assert(isRunningHere, "only the coroutine itself yields")
    if isCanceled { throw .canceled }
    pendingWaitKind = CoroutineWaitKind.yield.rawValue
    exit = .reschedule
    cov_fiber_suspend()
  }

  // MARK: Cancellation

  @usableFromInline var isCanceled: Bool { canceled.load(ordering: .relaxed) }

  /// Cancels the coroutine: its pending await throws `.canceled` promptly, later ones at once.
  @usableFromInline func cancel() {
    if canceled.exchange(true, ordering: .sequentiallyConsistent) { return }
    let generation = wait.currentGeneration
    if wait.claim(generation, reason: WaitState.canceledWake), wait.wake() { schedule() }
  }
}
