extension CoFuture {
  /// Starts a coroutine that computes the future's value, **at once, on the current thread**;
  /// the future completes with what `task` returns or throws.
  ///
  /// The coroutine runs until its first suspension before `init` returns; after each `await`
  /// it continues on the thread that resumed it. Cancelling the future cancels the coroutine
  /// (its pending `await` throws `CoroutineError.canceled`).
  ///
  /// ```swift
  /// let futures: [CoFuture<Int>] = ...
  /// let sum = CoFuture { try futures.reduce(0) { try $0 + $1.await() } }
  /// ```
  public convenience init(task: @escaping @Sendable () throws -> Value) {
    self.init()
    _ = startComputing(
      on: ImmediateScheduler(), stack: .automatic, file: unknownStartFile, line: 0, task: task)
  }
}
