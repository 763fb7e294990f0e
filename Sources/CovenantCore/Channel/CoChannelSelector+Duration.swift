extension CoChannelSelector {
  /// `onTimeout(_:_:)` with a `Duration`: if no case completes within `duration`, the select
  /// stops waiting, performs no case, and returns `body`'s value.
  ///
  /// ```swift
  /// let quiet: Duration = .milliseconds(500)
  /// let reply = try CoChannel.select { select in
  ///   select.onReceive(replies) { Optional($0) }
  ///   select.onTimeout(quiet * 4) { nil }          // two seconds
  /// }
  /// ```
  ///
  /// As the `DispatchTimeInterval` form: the timer is the coroutine's scheduler's (virtual time
  /// on CovenantTesting's `TestScheduler`), armed only if the select has to wait; a negative
  /// duration counts as zero; durations are counted in whole nanoseconds, rounded up.
  /// Disfavoured against that form, so that `onTimeout(.seconds(1)) { … }` keeps meaning what it
  /// meant.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public mutating func onTimeout(_ duration: Duration, _ body: @escaping () throws -> Output) {
    onTimeout(duration.dispatchTimeInterval, body)
  }
}
