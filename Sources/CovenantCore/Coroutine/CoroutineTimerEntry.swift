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
