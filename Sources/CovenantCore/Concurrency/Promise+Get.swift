extension Promise {
  // The doc comments sit inside each branch: one before `#if` attaches to no declaration.
  #if compiler(>=6.2)
    /// Suspends the calling task until the promise resolves, then returns its value or throws
    /// its error: `Promise` for Swift's `async`/`await`.
    ///
    /// ```swift
    /// func greeting() async throws -> String {
    ///   let user = try await api.fetchUser(id: 1).get()
    ///   return "Hello, \(user.name)"
    /// }
    /// ```
    ///
    /// Cancelling the calling `Task` does not interrupt the wait: a `Promise` has no cancellation
    /// of its own, so it is left to resolve and `get()` returns (or throws) its outcome then.
    /// Race it with `Task.checkCancellation()` or use a `CoFuture` (whose `get()` is cancellable)
    /// where cancellation must be prompt.
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`), so a value that is not
    /// `Sendable` can be awaited from an actor without crossing an isolation boundary.
    nonisolated(nonsending)
      public func get() async throws -> Value
    {
      try await awaitResolution().value.get()
    }
  #else
    /// Suspends the calling task until the promise resolves (see the Swift 6.2 variant above).
    public func get() async throws -> Value {
      try await awaitResolution().value.get()
    }
  #endif

  /// The outcome, waiting for it if needed.
  private func awaitResolution() async -> UncheckedSendable<Result<Value, any Error>> {
    if let result { return UncheckedSendable(result) }
    return await withCheckedContinuation { continuation in
      whenResolved { result in continuation.resume(returning: UncheckedSendable(result)) }
    }
  }
}
