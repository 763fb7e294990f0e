extension CoChannel: AsyncSequence {
  /// The channel's elements in a Swift `async` loop; the same iterator as its receiver's
  /// (see `CoChannel.Receiver.AsyncIterator`).
  public typealias AsyncIterator = Receiver.AsyncIterator

  /// An iterator for `for await element in channel { … }`: ends when the channel is closed and
  /// drained or cancelled, or the task is cancelled.
  ///
  /// ```swift
  /// let channel = CoChannel<Int>()
  /// Task { for await value in channel { print(value) } }
  /// ```
  public func makeAsyncIterator() -> AsyncIterator { receiver.makeAsyncIterator() }
}
