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
  @preconcurrency
  public convenience init(task: @escaping @Sendable () throws -> Value) {
    self.init(scheduler: ImmediateScheduler(), stack: .automatic, task: task)
  }

  /// A future computed by a coroutine started on `scheduler` (`coroutineFuture`'s core).
  convenience init(
    scheduler: any CoroutineScheduler, stack: CoroutineStackRequest,
    task: @escaping () throws -> Value
  ) {
    self.init()
    let coroutine = CoroutineContext(
      scheduler: scheduler, stack: stack,
      onStartFailure: { [self] error in resolve(.failure(error)) }
    ) { [self] in
      resolve(Result { try task() })
    }
    // A cycle (future → observer → coroutine → body → future) that lasts only while both are
    // pending: completion drops the observers, and the finished coroutine drops its body.
    whenResolved { result in
      if result.isCoFutureCancellation { coroutine.cancel() }
    }
    coroutine.start()
  }
}
