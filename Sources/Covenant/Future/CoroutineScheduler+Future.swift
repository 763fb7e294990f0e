extension CoroutineScheduler {
  /// Starts a coroutine running `task` on this scheduler and returns a future of its result:
  /// the value it returns, or the error it throws.
  ///
  /// Cancelling the future cancels the coroutine.
  ///
  /// ```swift
  /// let thumbnail = DispatchQueue.global().coroutineFuture {
  ///   try makeThumbnail(of: try loadImage(url).await())
  /// }
  /// ```
  ///
  /// - Parameter stackSize: bytes of stack for the coroutine; `nil` uses
  ///   `Coroutine.defaultStackSize`. If no stack can be had, the future fails with
  ///   `CoroutineStartError`.
  @preconcurrency
  public func coroutineFuture<T>(
    stackSize: Int? = nil, _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    CoFuture(scheduler: self, stackSize: stackSize, task: task)
  }
}
