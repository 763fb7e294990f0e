extension CoChannel.Receiver {
  /// A receiver of at most one element of this one per `interval`: the first element at once,
  /// then, at the end of each `interval`, the latest element that arrived during it (with
  /// `latest: false`, the first), if any; an interval without one ends the throttling, and the
  /// next element is handed over at once again (swift-async-algorithms' `throttle`, a leading
  /// and trailing throttle).
  ///
  /// ```swift
  /// let positions = drags.throttle(for: .milliseconds(100))
  /// ```
  ///
  /// - Elements are handed over at the ends of the intervals (virtual time *t*₀ + *k* ×
  ///   `interval` after a first element at *t*₀ on a `TestScheduler`); the next interval
  ///   starts when one ends, however long the consumer takes.
  /// - **Ends**: when this receiver closes, after handing over the element kept for the current
  ///   interval, at once. When it ends otherwise (cancelled, `.timeout`), with that error; the
  ///   element kept is dropped.
  /// - **Runs** in a coroutine of its own, on the scheduler of the first coroutine to use the
  ///   result, with that scheduler's timers; see the Streams article. Cancelling the result
  ///   cancels this receiver.
  @available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
  public func throttle(for interval: Duration, latest: Bool = true)
    -> CoChannel<Element>.Receiver
  {
    let upstream = self
    let period = interval.dispatchTimeInterval
    return CoChannel<Element>.Receiver(pumpNamed: "Covenant.throttle", consuming: [upstream]) {
      outlet in
      let ticker = StreamTicker()
      defer { ticker.disarm() }
      let upstreamOnly = PumpInputs<Element, UInt64>([upstream])
      while let first = try upstream.nextOrClosed() {
        ticker.arm(after: period)
        try outlet.send(first)
        var kept: Element?
        throttling: while true {
          switch try nextEvent(from: upstreamOnly, and: ticker.ticks.receiver, startingAt: 0) {
          case .first(_, .success(let element)):
            if latest || kept == nil { kept = element }
          case .first(_, .failure(.closed)):
            ticker.disarm()
            if let kept { try outlet.send(kept) }
            return
          case .first(_, .failure(let error)): throw error
          case .second(.success(let tick)):
            guard ticker.isCurrent(tick) else { continue }
            guard let element = kept.take() else {
              ticker.disarm()
              break throttling
            }
            ticker.arm(after: period)
            try outlet.send(element)
          case .second(.failure(let error)): throw error
          }
        }
      }
    }
  }
}
