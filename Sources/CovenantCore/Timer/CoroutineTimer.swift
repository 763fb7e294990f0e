/// A task scheduled to run after a delay by `CoroutineScheduler.scheduleTask(after:_:)`.
///
/// Covenant cancels the timer of every timed wait (`await(timeout:)`, `Coroutine.delay`,
/// `select` timeouts, `CoSemaphore.wait(timeout:)`, scope deadlines) as soon as the wait ends
/// some other way, so a finished coroutine does not wait for its timers' deadlines to be freed.
public protocol CoroutineTimer: Sendable {
  /// Stops the task from running, if it has not started yet, and releases it (and whatever it
  /// holds) as soon as the scheduler can. Does nothing once the task has run; calling it more
  /// than once is harmless. Callable from any thread.
  func cancel()
}
