/// Any coroutine scheduler as a Swift `TaskExecutor` (SE-0417): each job of a task that
/// prefers it runs in a task of the scheduler (`scheduleTask`), where the scheduler's
/// coroutines run.
///
/// ```swift
/// let loop = DispatchQueue(label: "loop")
/// let value = await Task(executorPreference: CoroutineSchedulerTaskExecutor(loop)) {
///   await compute()      // runs on `loop`
/// }.value
/// ```
///
/// The scheduler must run its tasks asynchronously (every queue, loop and thread pool does): a
/// scheduler that runs a task at once, inside `scheduleTask`, would run a job inside the
/// `enqueue` that hands it over.
///
/// A task keeps its executor preference for life: keep the executor alive while the task
/// runs (a task made with `Task(executorPreference:)` keeps it with toolchains that support
/// it; `Coroutine.awaitAsync` keeps it in any case).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class CoroutineSchedulerTaskExecutor: TaskExecutor, @unchecked Sendable {
  // `@unchecked Sendable`: the scheduler is immutable here, and a scheduler is called from any
  // thread (`scheduleTask` is its thread-safe entry point).

  /// The scheduler the jobs run on.
  public let scheduler: any CoroutineScheduler

  /// An executor that runs jobs on `scheduler`.
  public init(_ scheduler: any CoroutineScheduler) {
    self.scheduler = scheduler
  }

  /// Runs `job` in a task of the scheduler.
  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    scheduler.scheduleTask { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
  }
}
