extension Promise {
  /// `await(timeout:)` with a `Duration`: suspends until the promise resolves, or throws
  /// `CoFutureError.timeout` once `timeout` has passed (the promise itself is left alone: a
  /// `Promise` cannot be cancelled). A negative timeout counts as zero; durations are counted in
  /// whole nanoseconds, rounded up.
  ///
  /// ```swift
  /// let user = try fetchUser(id).await(timeout: .seconds(1.5))   // a Duration
  /// ```
  ///
  /// The timer is the coroutine's scheduler's (virtual time on CovenantTesting's
  /// `TestScheduler`), cancelled as soon as the promise resolves. Disfavoured against the
  /// `DispatchTimeInterval` form, so that `await(timeout: .seconds(1))` keeps meaning what it
  /// meant.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public func await(timeout: Duration) throws -> Value {
    try self.await(timeout: timeout.dispatchTimeInterval)
  }
}
