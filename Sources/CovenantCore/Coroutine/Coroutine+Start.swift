extension Coroutine {
  /// Starts a coroutine running `task` **at once, on the calling thread** (SwiftCoroutine's
  /// `Coroutine.start`): it runs until its first suspension before `start` returns, and after
  /// each `await` it continues on whichever thread resumed it (the thread that completed the
  /// future, sent to the channel, or called the callback).
  ///
  /// ```swift
  /// Coroutine.start {
  ///   let user = try api.fetchUser(id).await()   // start returns here; later continues on
  ///   cache.store(user)                          // the thread that fulfilled the future
  /// }
  /// ```
  ///
  /// An error thrown by `task` ends the coroutine. To continue on a known thread or queue, use
  /// `scheduler.startCoroutine` instead; for a result, `CoFuture(task:)`, which starts its
  /// coroutine the same way.
  @preconcurrency
  public static func start(_ task: @escaping @Sendable () throws -> Void) {
    CoroutineContext(scheduler: ImmediateScheduler(), body: task).start()
  }
}
