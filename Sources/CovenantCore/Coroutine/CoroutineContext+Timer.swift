import Dispatch

extension CoroutineContext {
  /// `suspend(register)` with a timer: if nothing handed the waker wins within `timeout`, the
  /// timer does (with `reason`) and wakes the coroutine. Returns true if the timer won with
  /// `WaitState.timedOutWake`.
  ///
  /// The timer competes for the await like any other waker: exactly one of them wins. Whoever
  /// wins, the timer is cancelled before this returns, so it holds nothing afterwards.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled before a waker wins.
  ///
  /// `kind` and `detail` say what the wait is for, in coroutine snapshots.
  ///
  /// `deadline`: `timeout` from now on `TimerQueue`'s clock, when the caller has read it already.
  func suspend(
    _ kind: CoroutineWaitKind, detail: UInt = 0, timeout: DispatchTimeInterval,
    deadline: UInt64? = nil, reason: UInt64 = WaitState.timedOutWake,
    _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) -> Bool {
    let generation = try beginWait()
    register(CoroutineWaker(coroutine: self, generation: generation))
    let timed: Bool
    if case .never = timeout { timed = false } else { timed = kind != .delay }
    noteWait(kind, timed: timed, detail: detail)
    let armed = armTimer(after: timeout, deadline: deadline, generation: generation, reason: reason)
    defer { if armed { disarmTimer() } }
    try completeWait()
    return wait.flags & WaitState.timedOutWake != 0
  }

  /// `Coroutine.delay`: suspends until the timer fires (an ordinary wake), or until cancelled.
  func sleep(for delay: DispatchTimeInterval) throws(CoroutineError) {
    // The deadline, read once: snapshots show it (uptime nanoseconds), and on a dispatch queue
    // the timer is armed for it.
    let deadline = delay.clampedNanoseconds.map { TimerQueue.now.adding(nanoseconds: $0) }
    _ = try suspend(
      .delay, detail: UInt(truncatingIfNeeded: deadline ?? 0), timeout: delay, deadline: deadline,
      reason: 0
    ) { _ in }
  }

  /// Arms the coroutine's timer to claim await `generation` (with `reason`) and wake it `delay`
  /// from now, on the scheduler the coroutine runs on. Returns false, arming nothing, if the
  /// await has already been claimed or `delay` is `.never`; otherwise the wait must call
  /// `disarmTimer()` when it ends. `deadline`, if given, is `delay` from now on `TimerQueue`'s
  /// clock, already read by the caller.
  ///
  /// On a dispatch queue the timer is the coroutine's own reusable `CoroutineTimerEntry` in the
  /// process's `TimerQueue` (no allocation). On any other scheduler it is that scheduler's
  /// `scheduleTask(after:_:)`, with a task that holds the coroutine weakly: even a timer that
  /// cannot release its task early does not keep a coroutine that has moved on.
  func armTimer(
    after delay: DispatchTimeInterval, deadline: UInt64? = nil, generation: UInt64,
    reason: UInt64 = WaitState.timedOutWake
  ) -> Bool {
    // Made before anything else, so that every wait a snapshot sees as timed has its entry,
    // which the snapshot reads (the entry is never replaced: see `timedWaitTimeout`).
    if timerEntry == nil { timerEntry = CoroutineTimerEntry(self) }
    let nanoseconds = delay.clampedNanoseconds
    timerEntry.unsafelyUnwrapped.timeoutForSnapshots.store(nanoseconds ?? .max, ordering: .relaxed)
    guard wait.flags & WaitState.claimed == 0, let nanoseconds else { return false }
    let token = TimerToken(generation: generation, reason: reason)
    // Unretained: the coroutine keeps its entry until it finishes.
    Unmanaged.passUnretained(timerEntry.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
      if isOnDispatchQueue {
        let deadline = deadline ?? TimerQueue.now.adding(nanoseconds: nanoseconds)
        entry.arm(at: deadline, token: token.rawValue)
      } else {
        entry.isOnQueue = false
        entry.scheduledTimer = scheduler.scheduleTask(after: delay) { [weak self] in
          self?.timerFired(token)
        }
      }
    }
    return true
  }

  /// Cancels the timer `armTimer` armed (which may have fired meanwhile).
  func disarmTimer() {
    Unmanaged.passUnretained(timerEntry.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.disarm() }
  }

  /// A timer's claim of the await it was armed for (refused if that await is over).
  func timerFired(_ token: TimerToken) {
    if wait.claim(token.generation, reason: token.reason), wait.wake() { schedule() }
  }
}
