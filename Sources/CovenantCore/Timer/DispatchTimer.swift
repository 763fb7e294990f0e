import Dispatch

/// A task handed to a dispatch queue at its deadline: the timer behind `DispatchQueue`'s
/// `scheduleTask(after:_:)` and behind the default timers of other schedulers.
///
/// Whoever takes the entry out of the `TimerQueue` owns the task: the firing (which hands it
/// to the queue) or a successful `cancel()` (which drops it at once, with what it captured).
// `@unchecked Sendable`: `task` is taken by whoever takes the entry out of `TimerQueue`, under
// its lock (see above).
final class DispatchTimer: TimerEntry, CoroutineTimer, @unchecked Sendable {
  private var task: (() -> Void)?
  private let target: DispatchQueue

  /// Schedules `task` on `target` `delay` from now (`.never`: not at all).
  static func schedule(
    after delay: DispatchTimeInterval, on target: DispatchQueue, _ task: @escaping () -> Void
  ) -> any CoroutineTimer {
    guard let nanoseconds = delay.clampedNanoseconds else { return NeverFiringTimer() }
    let timer = DispatchTimer(task: task, target: target)
    TimerQueue.arm(timer, after: nanoseconds, token: 0)
    return timer
  }

  private init(task: @escaping () -> Void, target: DispatchQueue) {
    self.task = task
    self.target = target
  }

  override func fire(token: UInt64) {
    guard let task = task.take() else { return }
    let transfer = UncheckedSendable(task)
    target.async { transfer.value() }
  }

  func cancel() {
    if TimerQueue.disarm(self) { task = nil }
  }
}
