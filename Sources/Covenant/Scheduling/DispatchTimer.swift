import Dispatch

/// A task handed to a dispatch queue at its deadline: the timer behind `DispatchQueue`'s
/// `scheduleTask(after:_:)` and behind the default timers of other schedulers.
///
/// Whoever takes the entry out of the `TimerQueue` owns the task: the firing (which hands it
/// to the queue) or a successful `cancel()` (which drops it at once, with what it captured).
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

extension DispatchQueue {
  /// Runs `task` on this queue `delay` from now, unless the returned timer is cancelled first.
  ///
  /// Like `asyncAfter(deadline:)`, except that cancelling releases the task at once: a timer
  /// that is no longer needed holds nothing until its deadline. A negative delay counts as
  /// zero; `.never` never runs the task.
  ///
  /// ```swift
  /// let timer = queue.scheduleTask(after: .seconds(5)) { print("too slow") }
  /// reply.whenComplete { _ in timer.cancel() }
  /// ```
  @discardableResult
  public func scheduleTask(
    after delay: DispatchTimeInterval, _ task: @escaping () -> Void
  ) -> any CoroutineTimer {
    DispatchTimer.schedule(after: delay, on: self, task)
  }
}

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
