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
    let timer = armTimer(after: timeout, generation: generation, reason: reason)
    defer { timer.disarm() }
    try completeWait()
    return wait.flags & WaitState.timedOutWake != 0
  }

  /// `Coroutine.delay`: suspends until the timer fires (an ordinary wake), or until cancelled.
  func sleep(for delay: DispatchTimeInterval) throws(CoroutineError) {
    _ = try suspend(timeout: delay, reason: 0) { _ in }
  }

  /// Arms a timer that claims await `generation` (with `reason`) and wakes it `delay` from now,
  /// on the scheduler the coroutine runs on; none if the await has already been claimed or
  /// `delay` is `.never`.
  ///
  /// On a dispatch queue the timer is the coroutine's own reusable `CoroutineTimerEntry` in the
  /// process's `TimerQueue` (no allocation). On any other scheduler it is that scheduler's
  /// `scheduleTask(after:_:)`, with a task that holds the coroutine weakly: even a timer that
  /// cannot release its task early does not keep a coroutine that has moved on.
  func armTimer(
    after delay: DispatchTimeInterval, generation: UInt64,
    reason: UInt64 = WaitState.timedOutWake
  ) -> ArmedTimer {
    guard wait.flags & WaitState.claimed == 0, let nanoseconds = delay.clampedNanoseconds else {
      return .none
    }
    let token = TimerToken(generation: generation, reason: reason)
    if isOnDispatchQueue {
      let entry = timerEntry ?? CoroutineTimerEntry(self)
      timerEntry = entry
      TimerQueue.shared.arm(entry, after: nanoseconds, token: token.rawValue)
      return .queue(entry)
    }
    return .scheduler(scheduler.scheduleTask(after: delay) { [weak self] in self?.timerFired(token) })
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

/// A coroutine's place in `TimerQueue`, reused from one timed wait to the next.
///
/// It holds the coroutine strongly, which the heap never sees for longer than the wait: the
/// wait takes the entry out again before it returns, and a firing that raced with that only
/// holds the entry until its claim is refused. The coroutine drops the entry when it finishes.
final class CoroutineTimerEntry: TimerEntry, @unchecked Sendable {
  let coroutine: CoroutineContext

  init(_ coroutine: CoroutineContext) { self.coroutine = coroutine }

  override func fire(token: UInt64) { coroutine.timerFired(TimerToken(rawValue: token)) }
}

/// The timer of one timed wait, cancelled when the wait ends.
enum ArmedTimer {
  case none
  case queue(CoroutineTimerEntry)
  case scheduler(any CoroutineTimer)

  func disarm() {
    switch self {
    case .none: break
    case .queue(let entry): TimerQueue.shared.disarm(entry)
    case .scheduler(let timer): timer.cancel()
    }
  }
}
