import Dispatch

extension CoroutineContext {
  /// `suspend(register)` with a timer: if nothing handed the waker wins within `timeout`, the
  /// timer does (with `reason`) and wakes the coroutine. Returns true if the timer won with
  /// `WaitState.timedOutWake`.
  ///
  /// The timer competes for the await like any other waker: exactly one of them wins. Whoever
  /// wins, the timer is cancelled before this returns, so it holds nothing afterwards.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled before a waker wins.
  func suspend(
    timeout: DispatchTimeInterval, reason: UInt64 = WaitState.timedOutWake,
    _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) -> Bool {
    let generation = try beginWait()
    register(CoroutineWaker(coroutine: self, generation: generation))
    let armed = armTimer(after: timeout, generation: generation, reason: reason)
    defer { if armed { disarmTimer() } }
    try completeWait()
    return wait.flags & WaitState.timedOutWake != 0
  }

  /// `Coroutine.delay`: suspends until the timer fires (an ordinary wake), or until cancelled.
  func sleep(for delay: DispatchTimeInterval) throws(CoroutineError) {
    _ = try suspend(timeout: delay, reason: 0) { _ in }
  }

  /// Arms the coroutine's timer to claim await `generation` (with `reason`) and wake it `delay`
  /// from now, on the scheduler the coroutine runs on. Returns false, arming nothing, if the
  /// await has already been claimed or `delay` is `.never`; otherwise the wait must call
  /// `disarmTimer()` when it ends.
  ///
  /// On a dispatch queue the timer is the coroutine's own reusable `CoroutineTimerEntry` in the
  /// process's `TimerQueue` (no allocation). On any other scheduler it is that scheduler's
  /// `scheduleTask(after:_:)`, with a task that holds the coroutine weakly: even a timer that
  /// cannot release its task early does not keep a coroutine that has moved on.
  func armTimer(
    after delay: DispatchTimeInterval, generation: UInt64,
    reason: UInt64 = WaitState.timedOutWake
  ) -> Bool {
    guard wait.flags & WaitState.claimed == 0, let nanoseconds = delay.clampedNanoseconds else {
      return false
    }
    let token = TimerToken(generation: generation, reason: reason)
    if timerEntry == nil { timerEntry = CoroutineTimerEntry(self) }
    // Unretained: the coroutine keeps its entry until it finishes.
    Unmanaged.passUnretained(timerEntry.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
      entry.isOnQueue = isOnDispatchQueue
      if entry.isOnQueue {
        TimerQueue.arm(entry, after: nanoseconds, token: token.rawValue)
      } else {
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

/// Which await a timer was armed for and how it resumes it, packed into the word a
/// `TimerEntry` carries.
struct TimerToken {
  let rawValue: UInt64

  init(generation: UInt64, reason: UInt64) {
    assert(reason == 0 || reason == WaitState.timedOutWake, "a timer resumes or times out")
    rawValue = generation << 1 | (reason == 0 ? 0 : 1)
  }

  init(rawValue: UInt64) { self.rawValue = rawValue }

  var generation: UInt64 { rawValue >> 1 }
  var reason: UInt64 { rawValue & 1 == 0 ? 0 : WaitState.timedOutWake }
}

/// A coroutine's timer, reused from one timed wait to the next: its place in `TimerQueue` when
/// the coroutine runs on a dispatch queue, or the timer its scheduler returned otherwise.
///
/// It holds the coroutine strongly, which the heap never sees for longer than the wait: the
/// wait takes the entry out again before it returns, and a firing that raced with that only
/// holds the entry until its claim is refused. The coroutine drops the entry when it finishes.
final class CoroutineTimerEntry: TimerEntry, @unchecked Sendable {
  let coroutine: CoroutineContext
  // Unchecked exclusivity: both are set and cleared by the coroutine only, in its own wait.
  /// Whether the current wait's timer is this entry in `TimerQueue`.
  @exclusivity(unchecked) var isOnQueue = false
  /// Otherwise, the timer the coroutine's scheduler returned.
  @exclusivity(unchecked) var scheduledTimer: (any CoroutineTimer)?

  init(_ coroutine: CoroutineContext) { self.coroutine = coroutine }

  override func fire(token: UInt64) { coroutine.timerFired(TimerToken(rawValue: token)) }

  /// Cancels whichever timer the current wait armed.
  func disarm() {
    if isOnQueue {
      TimerQueue.disarm(self)
    } else {
      scheduledTimer.take()?.cancel()
    }
  }
}
