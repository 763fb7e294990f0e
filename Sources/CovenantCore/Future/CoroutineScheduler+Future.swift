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
  /// SwiftCoroutine's exact signature, so `scheduler.coroutineFuture` also works as a function
  /// value; `coroutineFuture(stackSize:_:)` sets the stack size.
  @preconcurrency
  public func coroutineFuture<T>(_ task: @escaping @Sendable () throws -> T) -> CoFuture<T> {
    CoFuture(scheduler: self, stackSize: nil, task: task)
  }

  /// Starts a coroutine running `task` on this scheduler, on a stack of `stackSize` bytes, and
  /// returns a future of its result; otherwise the same as `coroutineFuture(_:)`.
  ///
  /// - Parameters:
  ///   - stackSize: bytes of stack for the coroutine; `nil` uses `Coroutine.defaultStackSize`.
  ///     If no stack can be had, the future fails with `CoroutineStartError`.
  ///   - task: the coroutine's body; the future completes with what it returns or throws.
  @preconcurrency
  public func coroutineFuture<T>(
    stackSize: Int?, _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    CoFuture(scheduler: self, stackSize: stackSize, task: task)
  }
}
