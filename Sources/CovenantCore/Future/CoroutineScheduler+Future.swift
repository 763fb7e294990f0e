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
  /// `future.join()` (and `CoScope.join()`, if the future is added to a scope) waits until the
  /// body has really ended, even after a cancel has failed the future.
  /// `coroutineFuture(stackSize:file:line:_:)` sets the stack size and
  /// `coroutineFuture(stackMode:file:line:_:)` the stack mode. By default the coroutine runs on
  /// one of the scheduler's shared stacks (see ``CoroutineStackMode``).
  ///
  /// A `name` shows in coroutine snapshots and dumps (``CoroutineSnapshot``).
  public func coroutineFuture<T>(
    name: String? = nil, file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    CoroutineFuture(
      scheduler: self, name: name, stack: .automatic, file: file, line: line, task: task)
  }

  /// SwiftCoroutine's exact signature, so that `scheduler.coroutineFuture` works as a function
  /// value; calls go to `coroutineFuture(file:line:_:)`.
  @_disfavoredOverload
  public func coroutineFuture<T>(_ task: @escaping @Sendable () throws -> T) -> CoFuture<T> {
    CoroutineFuture(
      scheduler: self, stack: .automatic, file: unknownStartFile, line: 0, task: task)
  }

  /// Starts a coroutine running `task` on this scheduler, on a dedicated stack of `stackSize`
  /// bytes, and returns a future of its result; otherwise the same as `coroutineFuture(_:)`.
  ///
  /// - Parameters:
  ///   - stackSize: bytes of stack for the coroutine, which then has a stack of its own
  ///     (``CoroutineStackMode/dedicated``); `nil` changes nothing (the scheduler's stack
  ///     mode, `Coroutine.defaultStackSize`). If no stack can be had, the future fails with
  ///     `CoroutineStartError`.
  ///   - name: what coroutine snapshots and dumps call it (``CoroutineSnapshot``).
  ///   - file, line: where the coroutine is started (filled in by the compiler).
  ///   - task: the coroutine's body; the future completes with what it returns or throws.
  public func coroutineFuture<T>(
    name: String? = nil, stackSize: Int?, file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    CoroutineFuture(
      scheduler: self, name: name, stack: .size(stackSize), file: file, line: line, task: task)
  }
}

extension CoroutineScheduler {
  /// Starts a coroutine running `task` on this scheduler with the stack mode `stackMode`, and
  /// returns a future of its result; otherwise the same as `coroutineFuture(file:line:_:)`.
  ///
  /// ```swift
  /// let report = queue.coroutineFuture(stackMode: .dedicated) { try buildReport() }
  /// ```
  public func coroutineFuture<T>(
    name: String? = nil, stackMode: CoroutineStackMode, file: StaticString = #fileID,
    line: UInt = #line, _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    CoroutineFuture(
      scheduler: self, name: name, stack: .mode(stackMode), file: file, line: line, task: task)
  }
}
