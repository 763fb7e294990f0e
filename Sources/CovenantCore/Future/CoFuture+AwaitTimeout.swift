import Dispatch

extension CoFuture {
  /// Like `await(timeout:)`, and with `cancelOnTimeout`, a timeout also cancels the future: what
  /// it stands for (a request, a coroutine started with `coroutineFuture`) stops, instead of
  /// running on unobserved.
  ///
  /// ```swift
  /// let page = session.dataTaskFuture(for: url)
  /// let (data, _) = try page.await(timeout: .seconds(10), cancelOnTimeout: true)
  /// ```
  ///
  /// **Why not by default.** `await(timeout:)` leaves the future alone, as SwiftCoroutine's
  /// does, and so does this method unless asked: a future may have other awaiters and
  /// observers (a cached or shared result), which one waiter's deadline must not fail for
  /// everyone, and the same call written with a `DispatchTimeInterval` or a `Duration` must mean
  /// the same thing. Kotlin's `withTimeout` cancels because its block owns what it waits for;
  /// say so here with `cancelOnTimeout: true`, or give a whole batch one deadline with
  /// `CoScope.cancel(after:on:)`, which cancels everything in the scope.
  ///
  /// - Throws: as `await(timeout:)`: `CoFutureError.timeout` when `timeout` expires (after
  ///   cancelling the future, if asked).
  public func await(timeout: DispatchTimeInterval, cancelOnTimeout: Bool) throws -> Value {
    guard cancelOnTimeout else { return try self.await(timeout: timeout) }
    do {
      return try self.await(timeout: timeout)
    } catch CoFutureError.timeout {
      cancel()
      throw CoFutureError.timeout
    }
  }

  /// `await(timeout:cancelOnTimeout:)` with a `Duration`: suspends until the future completes or
  /// `timeout` has passed, then throws `CoFutureError.timeout`, cancelling the future first if
  /// `cancelOnTimeout` (by default it is left alone; see `await(timeout:cancelOnTimeout:)` for
  /// why). A negative timeout counts as zero; durations are counted in whole nanoseconds,
  /// rounded up.
  ///
  /// ```swift
  /// let budget: Duration = .seconds(2)
  /// let user = try fetchUser(id).await(timeout: budget / 2)
  /// ```
  ///
  /// The timer is the coroutine's scheduler's (virtual time on CovenantTesting's
  /// `TestScheduler`), cancelled as soon as the future completes. Disfavoured against the
  /// `DispatchTimeInterval` form, so that `await(timeout: .seconds(1))` keeps meaning what it
  /// meant.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public func await(timeout: Duration, cancelOnTimeout: Bool = false) throws -> Value {
    try self.await(timeout: timeout.dispatchTimeInterval, cancelOnTimeout: cancelOnTimeout)
  }
}
