extension CoChannel.Receiver {
  /// A receiver of the elements of this one in arrays of `count`, each handed over when it is
  /// full or `interval` after its first element arrived, whichever comes first (so never
  /// empty). swift-async-algorithms' `chunks(ofCount:or:)` takes a signal instead, such as a
  /// periodic timer; here the clock starts with each chunk.
  ///
  /// ```swift
  /// let batches = logLines.chunked(byCount: 100, orWithin: .seconds(1))
  /// ```
  ///
  /// - **Ends**: when this receiver closes (or ends with `.timeout`), after handing over the
  ///   partial chunk at once; when it is cancelled, the partial chunk is dropped.
  /// - **Runs** in a coroutine of its own, on the scheduler of the first coroutine to use the
  ///   result, with that scheduler's timers (virtual time on a `TestScheduler`); see the
  ///   Streams article. Cancelling the result cancels this receiver.
  ///
  /// - Precondition: `count` is at least 1.
  @available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
  public func chunked(byCount count: Int, orWithin interval: Duration)
    -> CoChannel<[Element]>.Receiver
  {
    precondition(
      count >= 1, "CoChannel.Receiver.chunked(byCount:orWithin:) needs a count of 1 or more")
    let upstream = self
    let period = interval.dispatchTimeInterval
    return CoChannel<[Element]>.Receiver(pumpNamed: "Covenant.chunked", consuming: [upstream]) {
      outlet in
      let ticker = StreamTicker()
      defer { ticker.disarm() }
      let upstreamOnly = PumpInputs<Element, UInt64>([upstream])
      while let first = try upstream.nextOrClosed() {
        var chunk = [first]
        if count > 1 { ticker.arm(after: period) }
        filling: while chunk.count < count {
          switch try nextEvent(from: upstreamOnly, and: ticker.ticks.receiver, startingAt: 0) {
          case .first(_, .success(let element)): chunk.append(element)
          case .first(_, .failure(let error)) where error != .canceled:
            try outlet.send(chunk)
            throw error  // `.closed` ends the stream normally
          case .first(_, .failure(let error)): throw error
          case .second(.success(let tick)):
            if ticker.isCurrent(tick) { break filling }
          case .second(.failure(let error)): throw error
          }
        }
        ticker.disarm()
        try outlet.send(chunk)
      }
    }
  }
}
