import Dispatch

extension DispatchQueue: CoroutineScheduler {
  /// Runs `task` with `async`.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    async { task.value() }
  }

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
