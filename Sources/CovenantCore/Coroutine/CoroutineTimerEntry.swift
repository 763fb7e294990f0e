/// A coroutine's timer, reused from one timed wait to the next: its place in `TimerQueue` when
/// the coroutine runs on a dispatch queue, or the timer its scheduler returned otherwise.
///
/// The coroutine owns its entry. The entry refers back to the coroutine without owning it, except
/// while it is armed in `TimerQueue`: arming takes a reference to the coroutine that belongs to
/// the heap, and whoever takes the entry out gives it back — the wait's `disarm()`, or the firing
/// once it has made its claim. So a firing that races with the end of the wait still finds the
/// coroutine alive, no cycle keeps a finished coroutine, and a disarmed timer holds nothing.
// `@unchecked Sendable`: its fields are the coroutine's, touched only in its own waits; the
// firing reads the immutable `coroutine` (see above for when it holds it).
final class CoroutineTimerEntry: TimerEntry, @unchecked Sendable {
  /// Unretained; see above for when the entry holds a reference.
  private let coroutine: Unmanaged<CoroutineContext>
  // Unchecked exclusivity: both are set and cleared by the coroutine only, in its own wait.
  /// Whether the current wait's timer is this entry in `TimerQueue`.
  @exclusivity(unchecked) var isOnQueue = false
  /// Otherwise, the timer the coroutine's scheduler returned.
  @exclusivity(unchecked) var scheduledTimer: (any CoroutineTimer)?
  /// The current (or last) timed wait's timeout in nanoseconds (`UInt64.max`: `.never`), for
  /// coroutine snapshots, which read it from another thread while the coroutine is switched out.
  let timeoutForSnapshots = InlineAtomic<UInt64>(.max)

  init(_ coroutine: CoroutineContext) { self.coroutine = Unmanaged.passUnretained(coroutine) }

  /// Arms the entry in `TimerQueue` for `deadline` (see `TimerQueue.arm`), with the heap's
  /// reference to the coroutine.
  func arm(at deadline: UInt64, token: UInt64) {
    assert(scheduledTimer == nil, "a wait arms one timer")
    isOnQueue = true
    _ = heapsReference(retaining: true)
    TimerQueue.arm(self, at: deadline, token: token)
  }

  override func fire(token: UInt64) {
    coroutine._withUnsafeGuaranteedRef { $0.timerFired(TimerToken(rawValue: token)) }
    heapsReference().release()  // taken out of the heap with the entry
  }

  /// The heap's retain of the coroutine while the entry is armed in `TimerQueue`: made by
  /// `arm` (`retaining`), given back by whoever takes the entry out of the heap.
  private func heapsReference(retaining: Bool = false) -> UnsafeRetainedBits<CoroutineContext> {
    retaining
      ? UnsafeRetainedBits(retaining: coroutine) : UnsafeRetainedBits(ownedElsewhere: coroutine)
  }

  /// Cancels whichever timer the current wait armed.
  func disarm() {
    if isOnQueue {
      if TimerQueue.disarm(self) { heapsReference().release() }
    } else {
      scheduledTimer.take()?.cancel()
    }
  }
}
