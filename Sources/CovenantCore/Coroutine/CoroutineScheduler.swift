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
public protocol CoroutineScheduler {
  /// Runs `task` asynchronously (or synchronously, if the scheduler is that kind).
  func scheduleTask(_ task: @escaping () -> Void)
}
