extension CoChannel {
  /// The channel's elements for a loop that must tell the end of the stream from a
  /// cancellation: `next()` returns `nil` once the channel is closed and drained, and
  /// **throws** when the channel or the coroutine is cancelled.
  ///
  /// ```swift
  /// var count = 0
  /// while let line = try lines.values.next() {   // throws if cancelled
  ///   count += 1
  /// }
  /// report(count)                                  // reached only after a close
  /// ```
  ///
  /// The plain iterator (`makeIterator()`, `for value in channel.makeIterator()`) ends in
  /// both cases, so a loop over it cannot tell a finished stream from a cancelled one.
  @inlinable
  public var values: Values { Values(receiver) }

  /// A throwing way to receive a channel's elements one by one (see `CoChannel.values`).
  /// Thread-safe like the channel; single pass.
  public struct Values: Sendable {
    @usableFromInline let receiver: Receiver

    @inlinable init(_ receiver: Receiver) { self.receiver = receiver }

    /// The next element, suspending the calling coroutine until there is one; `nil` once the
    /// channel is closed and everything sent before has been received.
    ///
    /// - Throws: `CoChannelError.canceled` if the channel is cancelled;
    ///   `CoroutineError.canceled` if the coroutine is cancelled while waiting (nothing is
    ///   consumed); `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a
    ///   coroutine.
    @inlinable
    public func next() throws -> Element? {
      do {
        return try receiver.awaitReceive()
      } catch CoChannelError.closed {
        return nil
      }
    }
  }
}

extension CoChannel.Receiver {
  /// The elements received through this receiver, for a loop that throws on cancellation and
  /// ends on close; see `CoChannel.values`.
  @inlinable
  public var values: CoChannel.Values { CoChannel.Values(self) }
}
