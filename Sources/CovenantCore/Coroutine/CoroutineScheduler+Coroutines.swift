import Dispatch

extension CoroutineScheduler {
  /// Starts a coroutine that runs `task` on this scheduler.
  ///
  /// Inside `task`, `await` calls suspend the coroutine instead of blocking the thread; after
  /// each one the coroutine continues on this scheduler. An error thrown by `task` ends the
  /// coroutine (use `coroutineFuture` to observe it). With a `scope`, cancelling the scope
  /// cancels the coroutine.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let user = try api.fetchUser(id).await()      // suspends, the main thread keeps running
  ///   label.text = user.name
  /// }
  /// ```
  ///
  /// SwiftCoroutine's exact signature, so `startCoroutine(in:task:)` also works with the label
  /// and as a function value; `startCoroutine(in:stackSize:_:)` sets the stack size and
  /// `startCoroutine(in:stackMode:_:)` the stack mode. By default the coroutine runs on one of
  /// the scheduler's shared stacks (see ``CoroutineStackMode``).
  @preconcurrency
  public func startCoroutine(in scope: CoScope? = nil, task: @escaping @Sendable () throws -> Void)
  {
    startCoroutine(in: scope, stack: .automatic, task)
  }

  /// Starts a coroutine that runs `task` on this scheduler, on a dedicated stack of
  /// `stackSize` bytes; otherwise the same as `startCoroutine(in:task:)`.
  ///
  /// ```swift
  /// DispatchQueue.global().startCoroutine(stackSize: 1 << 20) { try parseDeeplyNested(input) }
  /// ```
  ///
  /// - Parameters:
  ///   - scope: cancelling this scope (or its deinit) cancels the coroutine.
  ///   - stackSize: bytes of stack for this coroutine, which then has a stack of its own
  ///     (``CoroutineStackMode/dedicated``); `nil` changes nothing (the scheduler's stack mode,
  ///     `Coroutine.defaultStackSize`). The stack is allocated when the coroutine first runs;
  ///     a coroutine that cannot get one (address space or mapping limit exhausted) does not
  ///     run, and the failure is reported on stderr.
  ///   - task: the coroutine's body; an error it throws ends the coroutine.
  @inlinable
  @preconcurrency
  public func startCoroutine(
    in scope: CoScope? = nil, stackSize: Int?, _ task: @escaping @Sendable () throws -> Void
  ) {
    startCoroutine(in: scope, stack: .size(stackSize), task)
  }

  /// The one start path: `stack` is what the caller asked for.
  @inlinable
  func startCoroutine(
    in scope: CoScope?, stack: CoroutineStackRequest, _ task: @escaping @Sendable () throws -> Void
  ) {
    let coroutine =
      Self.self == DispatchQueue.self
      ? CoroutineContext(
        queue: _identityCast(self, to: DispatchQueue.self), stack: stack, body: task)
      : CoroutineContext(scheduler: self, stack: stack, body: task)
    scope?.add(coroutine)
    coroutine.start()
  }

  /// Inside a coroutine: moves the coroutine to this scheduler, runs `task` there, and moves it
  /// back to where it was. Outside a coroutine it throws `calledOutsideCoroutine`.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let image = try DispatchQueue.global().await { try decode(data) }  // off the main thread
  ///   imageView.image = image                                             // back on main
  /// }
  /// ```
  public func await<T>(_ task: () throws -> T) throws -> T {
    let coroutine = try CoroutineContext.requireCurrent()
    if coroutine.isOn(self) { return try task() }
    if coroutine.isCanceled { throw CoroutineError.canceled }
    let home = coroutine.scheduler
    coroutine.hop(to: self)
    defer { coroutine.hop(to: home) }
    return try task()
  }
}
