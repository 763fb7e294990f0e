extension Coroutine {
  /// Suspends the current coroutine for `duration` (`Duration`'s form of `delay(_:)`, for
  /// arithmetic such as backoff: `try Coroutine.delay(base * 2)`). A negative duration does
  /// not wait, but is still a suspension point for cancellation.
  ///
  /// ```swift
  /// let pause: Duration = .milliseconds(250)
  /// try Coroutine.delay(pause * 4)                  // one second
  /// ```
  ///
  /// As `delay(_:)`: the timer is the coroutine's scheduler's (virtual time on CovenantTesting's
  /// `TestScheduler`), and cancelling the coroutine ends the delay at once with
  /// `CoroutineError.canceled`. Durations are counted in whole nanoseconds, rounded up.
  ///
  /// Disfavoured against `delay(_: DispatchTimeInterval)`, so that `delay(.seconds(1))` keeps
  /// meaning what it meant (`.seconds` exists for both types, with the same meaning).
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public static func delay(_ duration: Duration) throws {
    try delay(duration.dispatchTimeInterval)
  }
}
