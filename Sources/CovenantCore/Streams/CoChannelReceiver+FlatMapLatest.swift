extension CoChannel.Receiver {
  /// A receiver of the elements of the receiver `transform` makes of the latest element of
  /// this one: each new element cancels the inner receiver being read and starts reading the
  /// new one (Kotlin Flow's `flatMapLatest`, swift-async-algorithms' `flatMapLatest`).
  ///
  /// ```swift
  /// let results = queries.flatMapLatest { query in search(query) }   // only the latest query's
  /// ```
  ///
  /// - An inner element waiting to be handed over is dropped when a new element arrives first.
  /// - **Ends**: once this receiver has closed and the last inner receiver has too. If either
  ///   ends otherwise (cancelled, `.timeout`), the stream fails with that error, and the other
  ///   is cancelled (an inner receiver cancelled by the switch itself is no failure).
  /// - **Runs** in a coroutine of its own (see the Streams article). Cancelling the result
  ///   cancels this receiver and the inner receiver being read.
  @inlinable
  public func flatMapLatest<T>(
    _ transform: @escaping @Sendable (Element) -> CoChannel<T>.Receiver
  ) -> CoChannel<T>.Receiver {
    let outer = self
    return CoChannel<T>.Receiver(pumpNamed: "Covenant.flatMapLatest", consuming: [outer]) {
      outlet in
      var inner = PumpInputs<T, Element>()  // the one being read, if any
      defer { inner.receivers.first?.cancel() }
      var outerIsOpen = true
      /// Starts reading the inner receiver of `element`, cancelling the one before.
      func switchTo(_ element: Element) {
        inner.receivers.first?.cancel()
        inner.removeAll()
        inner.append(transform(element))
      }
      while outerIsOpen || !inner.isEmpty {
        // The outer receiver's slot (inner.count) first: a new element switches at once.
        switch try nextEvent(
          from: inner, and: outerIsOpen ? outer : nil, startingAt: inner.count)
        {
        case .second(.success(let element)): switchTo(element)
        case .second(.failure(.closed)): outerIsOpen = false
        case .second(.failure(let error)): throw error
        case .first(_, .success(let element)):
          guard outerIsOpen else {
            try outlet.send(element)
            continue
          }
          // Hand the element over, unless the outer receiver moves on first.
          let moved: Result<Element, CoChannelError>? = try CoChannel<Never>.select { select in
            select.onSend(outlet.channel, element) { nil }
            select.onReceiveResult(outer) { $0 }
          }
          switch moved {
          case nil: continue
          case .success(let next)?: switchTo(next)
          case .failure(.closed)?:
            outerIsOpen = false
            try outlet.send(element)
          case .failure(let error)?: throw error
          }
        case .first(_, .failure(.closed)): inner.removeAll()
        case .first(_, .failure(let error)): throw error
        }
      }
    }
  }
}
