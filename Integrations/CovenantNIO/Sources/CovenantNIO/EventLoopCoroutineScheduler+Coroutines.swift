import CovenantCore
import NIOCore

extension EventLoopCoroutineScheduler {
  /// Starts a coroutine that runs `task` on the loop's thread.
  ///
  /// Inside `task`, `await` calls suspend the coroutine, never the loop: the loop goes on with
  /// I/O and other tasks meanwhile. The coroutine is tracked by this scheduler and cancelled if
  /// the loop shuts down; with a `scope`, cancelling the scope cancels it too. An error thrown
  /// by `task` ends the coroutine (use `coroutineFuture` to observe it).
  ///
  /// Starting is asynchronous: `task` runs in a later loop task (or, when called inside a turn
  /// of this loop, right after the current item), never before this method returns. On a loop
  /// that has already shut down, `task` never runs.
  ///
  /// `name`, `file` and `line` are what coroutine snapshots and dumps show of it
  /// (`CoroutineSnapshot`).
  public func startCoroutine(
    in scope: CoScope? = nil, name: String? = nil, stackSize: Int? = nil,
    file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> Void
  ) {
    if isShutDown { return }  // the body never runs on a loop that has shut down
    guard let scope else {
      // Covenant's own start, tracked as a coroutine in the loop's scope: no future needed.
      (self as any CoroutineScheduler).startCoroutine(
        in: coroutines, name: name, stackSize: stackSize, file: file, line: line, task)
      return
    }
    let future = (self as any CoroutineScheduler).coroutineFuture(
      name: name, stackSize: stackSize, file: file, line: line, task)
    coroutines.add(future)
    scope.add(future)
  }

  /// Starts a coroutine that runs `task` on the loop's thread and returns a future of its
  /// result. Cancelling the future cancels the coroutine.
  ///
  /// If the loop shuts down before the coroutine finishes, the coroutine is cancelled (its
  /// pending `await` throws `CoroutineError.canceled`) and the future fails with
  /// `EventLoopError.shutdown`. On a loop that has already shut down, `task` never runs and
  /// the future is failed with `EventLoopError.shutdown` at once.
  public func coroutineFuture<T>(
    name: String? = nil, stackSize: Int? = nil, file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    if isShutDown { return CoFuture(result: .failure(EventLoopError.shutdown)) }
    let coroutine = (self as any CoroutineScheduler).coroutineFuture(
      name: name, stackSize: stackSize, file: file, line: line, task)
    coroutines.add(coroutine)
    // Derived, so cancelling the returned future cancels the coroutine's.
    return coroutine.mapResult { [self] result in
      guard case .failure(let error) = result, self.isShutDown, isCancellation(error) else {
        return result
      }
      return .failure(EventLoopError.shutdown)
    }
  }
}

private func isCancellation(_ error: any Error) -> Bool {
  (error as? CoFutureError) == .canceled || (error as? CoroutineError) == .canceled
}

extension EventLoop {
  /// Starts a coroutine on this loop (see `EventLoopCoroutineScheduler.startCoroutine`).
  ///
  /// ```swift
  /// channel.eventLoop.startCoroutine {
  ///   let user = try database.fetchUser(id).await()      // an EventLoopFuture: suspends
  ///   let quota = try limits.quota(for: user).await()    // a Covenant promise: suspends
  ///   try channel.writeAndFlush(render(user, quota)).await()
  /// }
  /// ```
  public func startCoroutine(
    in scope: CoScope? = nil, name: String? = nil, stackSize: Int? = nil,
    file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> Void
  ) {
    coroutineScheduler.startCoroutine(
      in: scope, name: name, stackSize: stackSize, file: file, line: line, task)
  }

  /// Starts a coroutine on this loop and returns a future of its result (see
  /// `EventLoopCoroutineScheduler.coroutineFuture`).
  public func coroutineFuture<T>(
    name: String? = nil, stackSize: Int? = nil, file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> T
  ) -> CoFuture<T> {
    coroutineScheduler.coroutineFuture(
      name: name, stackSize: stackSize, file: file, line: line, task)
  }

  /// Inside a coroutine: moves it to this loop, runs `task` there, and moves it back to where
  /// it was. Costs nothing when the coroutine already runs on this loop. Outside a coroutine it
  /// throws `CoroutineError.calledOutsideCoroutine`.
  ///
  /// ```swift
  /// DispatchQueue.global().startCoroutine {
  ///   let value = try channel.eventLoop.await { try connectionState.snapshot() }
  /// }
  /// ```
  public func await<T>(_ task: () throws -> T) throws -> T {
    try coroutineScheduler.await(task)
  }
}
