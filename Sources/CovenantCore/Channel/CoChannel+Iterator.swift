extension CoChannel {
  /// Receives the channel's elements one by one with `awaitReceive()`; itself a sequence, so
  /// `for value in channel.makeIterator() { … }` works inside a coroutine.
  ///
  /// Iteration suspends the coroutine while no element is ready, and ends when the channel is
  /// closed and drained or cancelled — and also when the coroutine is cancelled, or (outside a
  /// coroutine) as soon as no element is ready. A loop over it therefore cannot tell a finished
  /// stream from a cancelled one; `CoChannel.values` can (it throws on cancellation). Single
  /// pass; thread-safe like the channel.
  public struct Iterator: IteratorProtocol, Sequence {
    @usableFromInline let receiver: Receiver

    @inlinable init(_ receiver: Receiver) { self.receiver = receiver }

    /// The next element, or `nil` when iteration ends. Not `mutating` (the state is the
    /// channel's), so `let iterator = channel.makeIterator(); iterator.next()` works, as with
    /// SwiftCoroutine's `AnyIterator`.
    @inlinable
    public func next() -> Element? { try? receiver.awaitReceive() }
  }

  /// An iterator (and single-pass sequence) of the elements received from this channel.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   for value in channel.makeIterator() { print(value) }   // until closed and drained
  /// }
  /// ```
  @inlinable
  public func makeIterator() -> Iterator { Iterator(receiver) }
}
