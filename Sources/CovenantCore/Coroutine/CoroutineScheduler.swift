import Dispatch

/// Something that runs tasks: where a coroutine runs and continues after each `await`.
///
/// `DispatchQueue`, `OperationQueue` and `RunLoop` conform; any type with a way to run a
/// closure can, e.g. a Core Data context:
///
/// ```swift
/// extension NSManagedObjectContext: CoroutineScheduler {
///   func scheduleTask(_ task: @escaping () -> Void) { perform(task) }
/// }
/// ```
///
/// A scheduler must run every task it is given, exactly once, eventually. Tasks may be run on
/// any thread the scheduler owns; a concurrent scheduler may run a coroutine's consecutive
/// slices on different threads.
///
/// Timers belong to the scheduler too: every delay and timeout of a coroutine (`Coroutine.delay`,
/// `await(timeout:)`, `select` timeouts, `CoSemaphore.wait(timeout:)`) is armed with
/// `scheduleTask(after:_:)` of the scheduler the coroutine runs on, and cancelled when the wait
/// ends another way. The default implementation runs the task on a global dispatch queue, so a
/// conformance needs only `scheduleTask(_:)`; a scheduler with its own clock or timers
/// (SwiftNIO's event loops, CovenantTesting's `TestScheduler`) implements both.
public protocol CoroutineScheduler {
  /// Runs `task` asynchronously (or synchronously, if the scheduler is that kind).
  func scheduleTask(_ task: @escaping () -> Void)

  /// Runs `task` `delay` from now (a negative delay counts as zero; `.never` never runs it),
  /// unless the returned timer is cancelled first.
  ///
  /// Cancelling should release `task` promptly: Covenant's timed waits cancel their timers as
  /// soon as the wait ends, and expect what the task captured to be freed then rather than at
  /// the deadline. (Covenant's own tasks capture the coroutine weakly, so a timer that cannot
  /// release its task early costs only the timer's own memory until its deadline.)
  @discardableResult
  func scheduleTask(after delay: DispatchTimeInterval, _ task: @escaping () -> Void)
    -> any CoroutineTimer
}
