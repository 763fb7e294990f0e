extension CoChannel.Receiver {
  /// A receiver of the elements of this one that ends with `CoChannelError.timeout` once
  /// `interval` passes without an element: measured from the previous element being handed
  /// over (from the first use, for the first element), so a slow consumer does not count
  /// (Kotlin Flow's `timeout`).
  ///
  /// ```swift
  /// for reading in sensor.timeout(.seconds(5)).makeIterator() { show(reading) }
  /// ```
  ///
  /// - **Ends**: when this receiver does, with its error; or with `.timeout`, after which this
  ///   receiver is cancelled (nothing more is read from it).
  /// - **Runs** in a coroutine of its own, on the scheduler of the first coroutine to use the
  ///   result, with that scheduler's timers (virtual time on a `TestScheduler`); see the
  ///   Streams article. Cancelling the result cancels this receiver.
  @available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
  public func timeout(_ interval: Duration) -> CoChannel<Element>.Receiver {
    let upstream = self
    let wait = interval.dispatchTimeInterval
    return CoChannel<Element>.Receiver(pumpNamed: "Covenant.timeout", consuming: [upstream]) {
      outlet in
      while true {
        let outcome: Result<Element, CoChannelError>
        if let ready = upstream.receiveNow() {
          outcome = ready
        } else {
          let received: Result<Element, CoChannelError>? = try CoChannel<Never>.select { select in
            select.onReceiveResult(upstream) { $0 }
            select.onTimeout(wait) { nil }
          }
          guard let received else { throw CoChannelError.timeout }
          outcome = received
        }
        switch outcome {
        case .success(let element): try outlet.send(element)
        case .failure(.closed): return
        case .failure(let error): throw error
        }
      }
    }
  }
}
