extension CoSemaphore {
  /// `wait(timeout:)` with a `Duration`: takes a permit, suspending the calling coroutine for at
  /// most `timeout`.
  ///
  /// ```swift
  /// let slots = CoSemaphore(value: 4)
  /// try slots.wait(timeout: .seconds(2.5))        // a Duration
  /// defer { slots.signal() }
  /// ```
  ///
  /// As the `DispatchTimeInterval` form: the timer is the coroutine's scheduler's, a negative
  /// timeout counts as zero, durations are counted in whole nanoseconds, rounded up; disfavoured
  /// against that form, so that `wait(timeout: .seconds(1))` keeps meaning what it meant.
  /// - Throws: `CoFutureError.timeout` if no permit came in time (none is taken);
  ///   `CoroutineError.canceled` if the coroutine is cancelled while waiting;
  ///   `CoroutineError.calledOutsideCoroutine` if no permit is free outside a coroutine.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public func wait(timeout: Duration) throws {
    try wait(timeout: timeout.dispatchTimeInterval)
  }
}
