import Dispatch

/// One timer at a time for a pump (`throttle`, `chunked(byCount:orWithin:)`), armed on the
/// scheduler the pump runs on (virtual time on a `TestScheduler`), whose firing the pump
/// waits for as a receive case of `ticks` beside its upstream.
///
/// Each arming has a generation; a firing sends its generation, so that a timer that fires
/// after it was replaced or disarmed is recognised as stale. Used by its pump's coroutine only
/// (the timer task touches `ticks` alone, a thread-safe channel).
@usableFromInline
final class StreamTicker {
  /// The generation of each timer that fired (only the latest matters).
  @usableFromInline let ticks = CoChannel<UInt64>(bufferType: .conflated)
  private let scheduler: any CoroutineScheduler
  private var timer: (any CoroutineTimer)?
  private var generation: UInt64 = 0

  /// A ticker on the scheduler of the coroutine creating it (the default timers outside one).
  @usableFromInline init() {
    scheduler = CoroutineContext.current?.scheduler ?? ImmediateScheduler()
  }

  deinit { timer?.cancel() }

  /// Arms a timer `interval` from now, replacing the one armed before.
  @usableFromInline func arm(after interval: DispatchTimeInterval) {
    timer?.cancel()
    generation &+= 1
    let armed = generation
    timer = scheduler.scheduleTask(after: interval) { [weak ticks] in ticks?.offer(armed) }
  }

  /// Cancels the armed timer, if any; a firing already under way is then stale.
  @usableFromInline func disarm() {
    timer.take()?.cancel()
    generation &+= 1
  }

  /// Whether `tick` is the firing of the timer armed last (and not disarmed).
  @usableFromInline func isCurrent(_ tick: UInt64) -> Bool { tick == generation && timer != nil }
}
