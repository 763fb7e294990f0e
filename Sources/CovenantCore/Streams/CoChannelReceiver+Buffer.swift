extension CoChannel.Receiver {
  /// A receiver that keeps taking elements from this one while its consumers are busy, into a
  /// buffer of `capacity` elements, and deals with a full buffer by `policy` (Kotlin Flow's
  /// `buffer(capacity, onBufferOverflow)`, swift-async-algorithms' `buffer(policy:)`).
  ///
  /// ```swift
  /// let smoothed = frames.buffer(capacity: 8, policy: .dropOldest)
  /// ```
  ///
  /// - `.suspend`: when the buffer is full, stop taking elements until a consumer takes one
  ///   (a capacity of 0 hands each element over directly, holding one in hand; `Int.max`
  ///   never stops). `.dropOldest` drops the oldest buffered element; `.dropNewest` drops the
  ///   element that arrived. With a drop policy a capacity below 1 counts as 1.
  /// - **Ends**: when this receiver closes, after the buffered elements; with `.timeout`
  ///   likewise, after them. When it is cancelled, the buffer is dropped and the stream fails
  ///   with `.canceled`.
  /// - **Runs** in a coroutine of its own (see the Streams article), started when the buffered
  ///   receiver is first used. Cancelling it cancels this receiver.
  ///
  /// - Precondition: `capacity` is zero or more.
  @inlinable
  public func buffer(capacity: Int, policy: StreamBufferPolicy = .suspend)
    -> CoChannel<Element>.Receiver
  {
    precondition(
      capacity >= 0, "CoChannel.Receiver.buffer(capacity:policy:) needs a capacity of zero or more")
    let outlet: CoChannel<Element>
    switch policy {
    case .suspend: outlet = CoChannel(capacity: capacity)
    case .dropNewest: outlet = CoChannel(capacity: Swift.max(1, capacity))
    case .dropOldest:
      outlet =
        capacity == Int.max
        ? CoChannel(bufferType: .unlimited) : CoChannel(droppingOldestBeyond: capacity)
    }
    let upstream = self
    return CoChannel<Element>.Receiver(
      pumpNamed: "Covenant.buffer", outlet: outlet, consuming: [upstream]
    ) { outlet in
      while let element = try upstream.nextOrClosed() {
        if policy == .suspend {
          try outlet.send(element)
        } else if case .failure(let error)? = outlet.channel.performNow(SendOperation(element)) {
          throw error  // cancelled by its consumers (`nil`: full, the element is dropped)
        }
      }
    }
  }

  /// A receiver that keeps only the latest element while its consumers are busy (Kotlin Flow's
  /// `conflate()`): `buffer(capacity: 1, policy: .dropOldest)`.
  ///
  /// ```swift
  /// let latestPosition = positions.conflated()
  /// ```
  @inlinable
  public func conflated() -> CoChannel<Element>.Receiver {
    buffer(capacity: 1, policy: .dropOldest)
  }
}
