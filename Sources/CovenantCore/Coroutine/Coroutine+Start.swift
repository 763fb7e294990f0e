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
  /// An error thrown by `task` ends the coroutine and goes to `Coroutine.uncaughtErrorHandler`
  /// with `file` and `line` as the start site. To continue on a known thread or queue, use
  /// `scheduler.startCoroutine` instead; for a result, `CoFuture(task:)`, which starts its
  /// coroutine the same way.
  ///
  /// A `name` shows in coroutine snapshots and dumps (``CoroutineSnapshot``).
  public static func start(
    name: String? = nil, file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> Void
  ) {
    CoroutineContext(scheduler: ImmediateScheduler(), file: file, line: line, body: task)
      .start(name: name)
  }

  /// SwiftCoroutine's exact signature, for `Coroutine.start(_:)` as a function value; calls go
  /// to `start(name:file:line:_:)`, which records where the coroutine was started.
  @_disfavoredOverload
  public static func start(_ task: @escaping @Sendable () throws -> Void) {
    start(file: unknownStartFile, line: 0, task)
  }
}
