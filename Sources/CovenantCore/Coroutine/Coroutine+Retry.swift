extension Coroutine {
  /// Calls `body` until it returns, at most `attempts` times in all, waiting `backoff`'s delay
  /// between a failed call and the next; returns what `body` returned, or rethrows the last
  /// error.
  ///
  /// ```swift
  /// let page = try Coroutine.retry(attempts: 4, backoff: .exponential(initial: .seconds(1))) {
  ///   try session.dataTaskFuture(for: url).await(timeout: .seconds(10), cancelOnTimeout: true)
  /// }
  /// ```
  ///
  /// - **Attempts** count every call, the first included: `attempts: 4` means one call and at
  ///   most three retries. Fewer than 1 counts as 1.
  /// - **Which errors are retried:** those `shouldRetry` accepts (all by default), except
  ///   cancellations (`isCancellation`): a cancellation thrown by `body` is rethrown at once.
  ///   Timeouts are retried.
  /// - **Cancellation stops it.** The delays are `Coroutine.delay`s: cancelling the coroutine
  ///   ends the one under way with `CoroutineError.canceled`, and a cancelled coroutine starts
  ///   no further call (it throws `CoroutineError.canceled` instead).
  /// - **Time** is the coroutine's scheduler's: on CovenantTesting's `TestScheduler` the whole
  ///   schedule runs on virtual time, and with `jitter: 0` each call happens at an exact
  ///   instant (see ``RetryBackoff``).
  ///
  /// - Parameters:
  ///   - attempts: how many calls in all, at most.
  ///   - backoff: the delay before each retry: `.exponential(initial:)` (with jitter),
  ///     `.constant(_:)` or `.none`.
  ///   - shouldRetry: whether an error is worth another call (say, a timeout or a 503, but not
  ///     a 404); not asked after the last attempt.
  ///   - body: the work; it runs on the calling coroutine, and may await.
  /// - Throws: `body`'s last error; `CoroutineError.canceled` if the coroutine is cancelled
  ///   between calls; `CoroutineError.calledOutsideCoroutine` outside a coroutine (before any
  ///   call).
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  public static func retry<T>(
    attempts: Int, backoff: RetryBackoff, if shouldRetry: (any Error) -> Bool = { _ in true },
    _ body: () throws -> T
  ) throws -> T {
    let coroutine = try CoroutineContext.requireCurrent()
    var failures = 0
    while true {
      if coroutine.isCanceled { throw CoroutineError.canceled }
      do {
        return try body()
      } catch {
        failures += 1
        if error.isCancellation || failures >= attempts || !shouldRetry(error) { throw error }
      }
      try delay(backoff.delay(beforeRetry: failures))
    }
  }
}
