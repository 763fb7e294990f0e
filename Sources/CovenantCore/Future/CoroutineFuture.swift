/// The future of a coroutine started with `coroutineFuture`: it knows its coroutine, so that
/// `join()` and `CoScope.join()` can wait until the body has really ended (a cancelled future
/// fails at once, while its body runs on to its next suspension point).
final class CoroutineFuture<Value>: CoFuture<Value>, JoinableFuture, @unchecked Sendable {
  // `@unchecked Sendable`: as `CoFuture`; `coroutine` is set once, before the future is shared.
  private(set) var coroutine: CoroutineContext?

  init(
    scheduler: any CoroutineScheduler, name: String? = nil, stack: CoroutineStackRequest,
    file: StaticString, line: UInt, task: @escaping () throws -> Value
  ) {
    super.init()
    coroutine = startComputing(
      on: scheduler, name: name, stack: stack, file: file, line: line, task: task)
  }
}

/// A future whose value a coroutine computes, which can be joined.
protocol JoinableFuture: AnyObject {
  var coroutine: CoroutineContext? { get }
}

extension CoFuture {
  /// Starts the coroutine that completes this pending future with what `task` returns or
  /// throws; cancelling the future cancels it.
  func startComputing(
    on scheduler: any CoroutineScheduler, name: String? = nil, stack: CoroutineStackRequest,
    file: StaticString, line: UInt, task: @escaping () throws -> Value
  ) -> CoroutineContext {
    let coroutine = CoroutineContext(
      scheduler: scheduler, stack: stack, startFailureReceiver: self, file: file, line: line
    ) { [self] in
      resolve(Result { try task() })
    }
    // A cycle (future → observer → coroutine → body → future) that lasts only while both are
    // pending: completion drops the observers, and the finished coroutine drops its body.
    whenResolved { result in
      if result.isCoFutureCancellation { coroutine.cancel() }
    }
    coroutine.start(name: name)
    return coroutine
  }

  /// Waits until the future is complete and, for a future of `coroutineFuture`, until its
  /// coroutine's body has really ended (returned or thrown): after `cancel()`, the future fails
  /// at once, but the body runs on until its next suspension point. Inside a coroutine it
  /// suspends; outside one it blocks the calling thread.
  ///
  /// ```swift
  /// let work = DispatchQueue.global().coroutineFuture { try crunch() }
  /// work.cancel()
  /// try work.join()      // crunch() has returned or thrown: nothing of it still runs
  /// ```
  ///
  /// For other futures (including `CoFuture(task:)`, whose initializer cannot return this kind
  /// of future) it waits for completion only, like `await()` without the value.
  /// - Throws: `CoroutineError.canceled` if the joining coroutine is cancelled while it waits
  ///   (never the future's own error).
  public func join() throws {
    try suspendOrBlock { done in whenResolved { _ in done() } }
    if let coroutine = (self as? any JoinableFuture)?.coroutine {
      try suspendOrBlock { done in coroutine.whenFinished { done() } }
    }
  }
}
