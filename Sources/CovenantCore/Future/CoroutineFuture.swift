/// The future of a coroutine started with `coroutineFuture`: it knows its coroutine, so that
/// `join()` and `CoScope.join()` can wait until the body has really ended (a cancelled future
/// fails at once, while its body runs on to its next suspension point).
final class CoroutineFuture<Value>: CoFuture<Value>, JoinableFuture, JoinedByScope,
  @unchecked Sendable
{
  // `@unchecked Sendable`: as `CoFuture`; `coroutine` is set once, before the future is shared.
  /// Weak: a future is often kept long after its coroutine has finished (cached, stored in a
  /// model), and must not keep the coroutine object with it. A coroutine that has not finished
  /// is kept alive anyway (by its scheduler's task until it runs, then by its own frame), so
  /// `nil` means finished — or dropped unrun by its scheduler, which ends it too (see
  /// `CoroutineContext.deinit`). Weak also in the cancel observer (`startComputing`), so that
  /// nothing of the future keeps a coroutine its scheduler dropped.
  private(set) weak var coroutine: CoroutineContext?

  init(
    scheduler: any CoroutineScheduler, name: String? = nil, stack: CoroutineStackRequest,
    file: StaticString, line: UInt, task: @escaping () throws -> Value
  ) {
    super.init()
    coroutine = startComputing(
      on: scheduler, name: name, stack: stack, file: file, line: line, cancelsWeakly: true,
      task: task)
  }
}

extension CoroutineFuture {
  /// Added to a scope: its `join()` waits for the coroutine too (if it has not finished).
  func addRunningWork(to scope: CoScope) {
    if let coroutine { scope.track(coroutine) }
  }
}

/// A future whose value a coroutine computes, which can be joined.
protocol JoinableFuture: AnyObject {
  var coroutine: CoroutineContext? { get }
}

extension CoFuture {
  /// Starts the coroutine that completes this pending future with what `task` returns or
  /// throws; cancelling the future cancels it.
  ///
  /// `cancelsWeakly`: whether the cancel observer holds the coroutine weakly (one allocation
  /// more), for a scheduler that may drop the coroutine before running it (see
  /// `CoroutineFuture`). Otherwise it holds it strongly: a cycle (future → observer → coroutine
  /// → body → future) that lasts only while both are pending, as completion drops the
  /// observers and the finished coroutine drops its body.
  func startComputing(
    on scheduler: any CoroutineScheduler, name: String? = nil, stack: CoroutineStackRequest,
    file: StaticString, line: UInt, cancelsWeakly: Bool = false,
    task: @escaping () throws -> Value
  ) -> CoroutineContext {
    let coroutine = CoroutineContext(
      scheduler: scheduler, stack: stack, startFailureReceiver: self, file: file, line: line
    ) { [self] in
      resolve(Result { try task() })
    }
    if cancelsWeakly {
      whenResolved { [weak coroutine] result in
        if result.isCoFutureCancellation { coroutine?.cancel() }
      }
    } else {
      whenResolved { result in
        if result.isCoFutureCancellation { coroutine.cancel() }
      }
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
    if let coroutine = (self as? any JoinableFuture)?.coroutine {
      // Finished implies complete: the body completes the future before it ends, and so does a
      // coroutine that could not get a stack or that its scheduler dropped unrun.
      try suspendOrBlock(
        until: { done in coroutine.whenFinished { done() } },
        unregister: { coroutine.removeFinishCallback($0) })
    } else {
      // Not a coroutine's future, or its coroutine has finished (and gone): completion only.
      try suspendOrBlock(
        until: { done -> ClosureReaction<Value>? in
          let reaction = ClosureReaction<Value> { _ in done() }
          if cell.register(reaction) { return reaction }
          done()
          return nil
        },
        unregister: { _ = cell.unregister($0) })
    }
  }
}

extension CoFuture {
  /// For a future of `coroutineFuture` whose coroutine has not gone yet, how many callbacks wait
  /// for that coroutine to finish (`join()`s, scopes); `nil` otherwise. For tests.
  package var coroutineFinishCallbackCount: Int? {
    (self as? any JoinableFuture)?.coroutine?.finishCallbackCount
  }
}
