import Dispatch

extension CoroutineScheduler {
  /// Starts a coroutine that runs `task` on this scheduler.
  ///
  /// Inside `task`, `await` calls suspend the coroutine instead of blocking the thread; after
  /// each one the coroutine continues on this scheduler. An error thrown by `task` ends the
  /// coroutine and goes to the uncaught-error handler (`CoScope.uncaughtErrorHandler` of
  /// `scope`, else `Coroutine.uncaughtErrorHandler`), with `file` and `line` as the start site;
  /// use `coroutineFuture` to get the error instead. With a `scope`, cancelling the scope
  /// cancels the coroutine, and `scope.join()` waits for it to end.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let user = try api.fetchUser(id).await()      // suspends, the main thread keeps running
  ///   label.text = user.name
  /// }
  /// ```
  ///
  /// `startCoroutine(in:stackSize:file:line:_:)` sets the stack size and
  /// `startCoroutine(in:stackMode:file:line:_:)` the stack mode. By default the coroutine runs
  /// on one of the scheduler's shared stacks (see ``CoroutineStackMode``). A `name` shows in
  /// coroutine snapshots and dumps (``CoroutineSnapshot``).
  public func startCoroutine(
    in scope: CoScope? = nil, name: String? = nil, file: StaticString = #fileID,
    line: UInt = #line, task: @escaping @Sendable () throws -> Void
  ) {
    startCoroutine(in: scope, name: name, stack: .automatic, file: file, line: line, task)
  }

  /// SwiftCoroutine's exact signature, so that `scheduler.startCoroutine(in:task:)` works as a
  /// function value; calls go to `startCoroutine(in:file:line:task:)`, which records where the
  /// coroutine was started (this one cannot).
  @_disfavoredOverload
  public func startCoroutine(in scope: CoScope? = nil, task: @escaping @Sendable () throws -> Void)
  {
    startCoroutine(in: scope, stack: .automatic, file: unknownStartFile, line: 0, task)
  }

  /// Starts a coroutine that runs `task` on this scheduler, on a dedicated stack of
  /// `stackSize` bytes; otherwise the same as `startCoroutine(in:file:line:task:)`.
  ///
  /// ```swift
  /// DispatchQueue.global().startCoroutine(stackSize: 1 << 20) { try parseDeeplyNested(input) }
  /// ```
  ///
  /// - Parameters:
  ///   - scope: cancelling this scope (or its deinit) cancels the coroutine; `scope.join()`
  ///     waits for it; the scope's uncaught-error handler gets an error it throws.
  ///   - name: what coroutine snapshots and dumps call it (``CoroutineSnapshot``).
  ///   - stackSize: bytes of stack for this coroutine, which then has a stack of its own
  ///     (``CoroutineStackMode/dedicated``); `nil` changes nothing (the scheduler's stack mode,
  ///     `Coroutine.defaultStackSize`). The stack is allocated when the coroutine first runs;
  ///     a coroutine that cannot get one (address space or mapping limit exhausted) does not
  ///     run, and the failure is reported on stderr.
  ///   - file, line: where the coroutine is started, for the report of an error it throws
  ///     (filled in by the compiler).
  ///   - task: the coroutine's body; an error it throws ends the coroutine.
  @inlinable
  public func startCoroutine(
    in scope: CoScope? = nil, name: String? = nil, stackSize: Int?,
    file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> Void
  ) {
    startCoroutine(in: scope, name: name, stack: .size(stackSize), file: file, line: line, task)
  }

  /// The one start path: `stack` is what the caller asked for.
  @inlinable
  func startCoroutine(
    in scope: CoScope?, name: String? = nil, stack: CoroutineStackRequest, file: StaticString,
    line: UInt, _ task: @escaping @Sendable () throws -> Void
  ) {
    let coroutine =
      Self.self == DispatchQueue.self
      ? CoroutineContext(
        queue: _identityCast(self, to: DispatchQueue.self), stack: stack, file: file, line: line,
        body: task)
      : CoroutineContext(scheduler: self, stack: stack, file: file, line: line, body: task)
    scope?.addCoroutine(coroutine)
    if let name { coroutine.start(name: name) } else { coroutine.start() }
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
