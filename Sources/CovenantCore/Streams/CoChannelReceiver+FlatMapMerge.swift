extension CoChannel.Receiver {
  /// A receiver of the elements of the receivers `transform` makes of the elements of this one,
  /// up to `maxConcurrent` of them read at once, merged as they arrive (Kotlin Flow's
  /// `flatMapMerge(concurrency)`).
  ///
  /// ```swift
  /// let pages = urls.flatMapMerge(maxConcurrent: 4) { url in download(url) }
  /// ```
  ///
  /// - **Order.** Each inner receiver's elements keep their order; inner receivers with
  ///   elements ready, and this receiver (while fewer than `maxConcurrent` are being read),
  ///   take turns.
  /// - **Ends**: once this receiver has closed and every inner receiver has too. If any of
  ///   them ends otherwise (cancelled, `.timeout`), the stream fails with that error, and the
  ///   others are cancelled.
  /// - **Runs** in a coroutine of its own (see the Streams article). Cancelling the result
  ///   cancels this receiver and every inner receiver being read.
  ///
  /// - Precondition: `maxConcurrent` is at least 1.
  @inlinable
  public func flatMapMerge<T>(
    maxConcurrent: Int = 16, _ transform: @escaping @Sendable (Element) -> CoChannel<T>.Receiver
  ) -> CoChannel<T>.Receiver {
    precondition(maxConcurrent >= 1, "CoChannel.Receiver.flatMapMerge needs maxConcurrent ≥ 1")
    let outer = self
    return CoChannel<T>.Receiver(pumpNamed: "Covenant.flatMapMerge", consuming: [outer]) {
      outlet in
      var inners = PumpInputs<T, Element>()
      // However the stage ends, the inner receivers it was reading are its own to cancel.
      defer { for inner in inners.receivers { inner.cancel() } }
      var outerIsOpen = true
      var start = 0
      while outerIsOpen || !inners.isEmpty {
        let accepting = outerIsOpen && inners.count < maxConcurrent
        switch try nextEvent(from: inners, and: accepting ? outer : nil, startingAt: start) {
        case .second(.success(let element)):
          inners.append(transform(element))
          start = 0
        case .second(.failure(.closed)): outerIsOpen = false
        case .second(.failure(let error)): throw error
        case .first(let index, .success(let element)):
          start = index + 1
          try outlet.send(element)
        case .first(let index, .failure(.closed)):
          inners.remove(at: index)
          start = index
        case .first(_, .failure(let error)): throw error
        }
      }
    }
  }
}
