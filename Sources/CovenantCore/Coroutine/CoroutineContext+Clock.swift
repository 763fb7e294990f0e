extension CoroutineContext {
  /// Now, in nanoseconds, on the clock of the timers of the scheduler the coroutine runs on:
  /// the scheduler's own (`SchedulerClock`), else the uptime clock the default timers and
  /// dispatch queues' timers count on.
  var schedulerClockNanoseconds: UInt64 {
    if !isOnDispatchQueue, let clock = scheduler as? any SchedulerClock {
      return clock.clockNanoseconds
    }
    return TimerQueue.now
  }
}
