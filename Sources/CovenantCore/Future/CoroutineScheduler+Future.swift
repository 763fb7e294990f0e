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
  /// value; `coroutineFuture(stackSize:_:)` sets the stack size and
  /// `coroutineFuture(stackMode:_:)` the stack mode.
  @preconcurrency
  public func coroutineFuture<T>(_ task: @escaping @Sendable () throws -> T) -> CoFuture<T> {
    CoFuture(scheduler: self, stack: .automatic, task: task)
  }

  /// Starts a coroutine running `task` on this scheduler, on a dedicated stack of `stackSize`
  /// bytes, and returns a future of its result; otherwise the same as `coroutineFuture(_:)`.
  ///
  /// - Parameters:
  ///   - stackSize: bytes of stack for the coroutine, which then has a stack of its own
  ///     (``CoroutineStackMode/dedicated``); `nil` changes nothing (the scheduler's stack
  ///     mode, `Coroutine.defaultStackSize`). If no stack can be had, the future fails with
  ///     `CoroutineStartError`.
  ///   - task: the coroutine's body; the future completes with what it returns or throws.
  @preconcurrency
  public func coroutineFuture<T>(
    stackSize: Int?, _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    CoFuture(scheduler: self, stack: .size(stackSize), task: task)
  }
}
