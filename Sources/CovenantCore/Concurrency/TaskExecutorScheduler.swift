import Dispatch

/// A coroutine scheduler that can also run Swift tasks: `Coroutine.awaitAsync` called from a
/// coroutine on it runs its task there (`Task(executorPreference:)`, SE-0417), so async code
/// called from a coroutine on an event loop runs on that loop, with no thread hop.
///
/// `DispatchQueue` conforms (its tasks' jobs run on the queue), and so does CovenantNIO's
/// `EventLoopCoroutineScheduler`. A scheduler of your own conforms by handing out an executor
/// that runs jobs where its coroutines run, for instance ``CoroutineSchedulerTaskExecutor``:
///
/// ```swift
/// extension MyLoop: TaskExecutorScheduler {
///   var taskExecutor: any TaskExecutor { CoroutineSchedulerTaskExecutor(self) }
/// }
/// ```
///
/// A scheduler that does not conform (a `TestScheduler`, `RunLoop`, `OperationQueue`, the
/// immediate scheduler of `Coroutine.start`) leaves `awaitAsync`'s task on the global
/// concurrent executor, as on platforms without task executors.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public protocol TaskExecutorScheduler: CoroutineScheduler {
  /// The executor that runs Swift tasks' jobs on this scheduler.
  var taskExecutor: any TaskExecutor { get }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension DispatchQueue: TaskExecutorScheduler {
  /// An executor that runs Swift tasks' jobs on this queue (``CoroutineSchedulerTaskExecutor``).
  ///
  /// ```swift
  /// let queue = DispatchQueue(label: "work")
  /// Task(executorPreference: queue.taskExecutor) { await work() }  // runs on `queue`
  /// ```
  public var taskExecutor: any TaskExecutor { CoroutineSchedulerTaskExecutor(self) }
}

extension CoroutineContext {
  /// The executor `Coroutine.awaitAsync` prefers for its task: the coroutine's scheduler's, when
  /// it can serve as one (`TaskExecutorScheduler`), else none (the global executor).
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  var preferredTaskExecutor: (any TaskExecutor)? {
    if let queue = dispatchQueue { return CoroutineSchedulerTaskExecutor(queue) }
    return (otherScheduler as? any TaskExecutorScheduler)?.taskExecutor
  }
}
