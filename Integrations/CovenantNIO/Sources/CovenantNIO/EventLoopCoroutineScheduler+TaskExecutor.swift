import CovenantCore

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension EventLoopCoroutineScheduler: TaskExecutorScheduler {
  /// An executor that runs Swift tasks' jobs on this loop, the way the loop runs coroutines:
  /// inside a turn, right after the current item, with no `execute`.
  ///
  /// `Coroutine.awaitAsync` called from a coroutine on this loop prefers it, so async code
  /// that does not hop to an actor (an AsyncHTTPClient or postgres-nio call on the same loop)
  /// runs on the loop, with no thread hop there and back:
  ///
  /// ```swift
  /// loop.startCoroutine {
  ///   let response = try Coroutine.awaitAsync {
  ///     try await client.execute(request, timeout: .seconds(5))  // runs on `loop`
  ///   }
  /// }
  /// ```
  ///
  /// A task made with `Task(executorPreference: loop.coroutineScheduler.taskExecutor)` runs
  /// its jobs here too. After the loop has shut down, jobs run where the scheduler's tasks go
  /// then (a private serial queue), so a task is never dropped.
  public var taskExecutor: any TaskExecutor { CoroutineSchedulerTaskExecutor(self) }
}
