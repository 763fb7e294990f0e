import Dispatch

extension DispatchQueue: CoroutineScheduler {
  /// Runs `task` with `async`.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    async { task.value() }
  }
}
