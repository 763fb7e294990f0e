extension CoChannel.Receiver {
  /// A receiver of the first `maxLength` elements received through this one; then its stream
  /// is over (`CoChannelError.closed`) and **this receiver is cancelled**: nothing more is read
  /// from it, and its producers learn that nobody listens (Kotlin Flow's `take`; dropping a
  /// swift-async-algorithms `prefix` iterator ends an `AsyncStream` the same way). A shared
  /// upstream — a `BroadcastChannel` subscription, a `StateChannel`'s updates — ends only
  /// itself.
  ///
  /// ```swift
  /// let firstThree = events.prefix(3)
  /// ```
  ///
  /// `prefix(0)` is over at once and leaves this receiver alone.
  ///
  /// - Precondition: `maxLength` is zero or more.
  @inlinable
  public func prefix(_ maxLength: Int) -> CoChannel<Element>.Receiver {
    precondition(maxLength >= 0, "CoChannel.Receiver.prefix(_:) needs a length of zero or more")
    return CoChannel<Element>.Receiver(
      view: StatefulViewReceiving(self, PrefixStage<Element>(remaining: maxLength)))
  }
}

/// `prefix`'s stage: how many elements it may still hand over.
@usableFromInline
struct PrefixStage<Element>: StreamStage {
  @usableFromInline var remaining: Int

  @inlinable init(remaining: Int) { self.remaining = remaining }

  @inlinable var isFinished: Bool { remaining == 0 }

  @inlinable mutating func receive(_ input: Element) -> StageStep<Element> {
    remaining -= 1
    return remaining == 0 ? .emitLast(input) : .emit(input)
  }
}
