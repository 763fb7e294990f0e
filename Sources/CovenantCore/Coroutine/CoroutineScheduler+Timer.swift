import Dispatch

extension CoroutineScheduler {
  /// The default timer of a scheduler that has none of its own: runs `task` on a global
  /// dispatch queue (not on this scheduler) `delay` from now, unless the returned timer is
  /// cancelled first; cancelling releases the task at once.
  ///
  /// A coroutine's timed waits only use the timer to wake the coroutine, which then continues
  /// on its own scheduler as after any other wake, so a scheduler needs its own timers only to
  /// avoid that hop through the global queue (SwiftNIO's event loops, for instance) or to
  /// control time (CovenantTesting's `TestScheduler`).
  @discardableResult
  public func scheduleTask(
    after delay: DispatchTimeInterval, _ task: @escaping () -> Void
  ) -> any CoroutineTimer {
    DispatchTimer.schedule(after: delay, on: .global(), task)
  }
}
