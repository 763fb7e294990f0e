extension CoFuture {
  // The doc comments sit inside each branch: one before `#if` attaches to no declaration.
  #if compiler(>=6.2)
    /// Suspends the calling task until the future completes, then returns its value or throws
    /// its error: `CoFuture` for Swift's `async`/`await`.
    ///
    /// ```swift
    /// let image = try await DispatchQueue.global().coroutineFuture { try render(page) }.get()
    /// ```
    ///
    /// Cancelling the calling `Task` **cancels the future** (and, through it, the coroutine or
    /// task computing it); `get()` then throws `CoFutureError.canceled`. A future that already
    /// completed returns at once, even in a cancelled task.
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`), so a value that is not
    /// `Sendable` can be awaited from an actor without crossing an isolation boundary.
    nonisolated(nonsending)
      public func get() async throws -> Value
    {
      try await awaitCompletion().value.get()
    }
  #else
    /// Suspends the calling task until the future completes (see the Swift 6.2 variant above).
    public func get() async throws -> Value {
      try await awaitCompletion().value.get()
    }
  #endif

  /// The outcome, waiting for it and cancelling the future if the task is cancelled.
  private func awaitCompletion() async -> UncheckedSendable<Result<Value, any Error>> {
    if let result { return UncheckedSendable(result) }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        whenResolved { result in continuation.resume(returning: UncheckedSendable(result)) }
      }
    } onCancel: {
      cancel()
    }
  }
}
