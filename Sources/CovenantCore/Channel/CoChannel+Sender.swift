extension CoChannel {
  /// The send side of a channel: what producers get when they must not receive. Thread-safe,
  /// like the channel.
  ///
  /// ```swift
  /// func produce(into sender: CoChannel<Int>.Sender) throws {
  ///   for value in 0..<10 { try sender.awaitSend(value) }
  ///   sender.close()
  /// }
  /// ```
  public final class Sender: CoCancellable, Sendable {
    @usableFromInline let channel: CoChannel<Element>

    @usableFromInline init(_ channel: CoChannel<Element>) { self.channel = channel }

    /// The channel's buffer type.
    public var bufferType: BufferType { channel.bufferType }

    /// Sends `element`, suspending while the channel cannot take it; see
    /// `CoChannel.awaitSend(_:)`.
    @inlinable
    public func awaitSend(_ element: Element) throws { try channel.awaitSend(element) }

    /// Sends `future`'s value when it succeeds; see `CoChannel.sendFuture(_:)`.
    public func sendFuture(_ future: CoFuture<Element>) { channel.sendFuture(future) }

    /// Sends `element` if possible without waiting; see `CoChannel.offer(_:)`.
    @inlinable @discardableResult
    public func offer(_ element: Element) -> Bool { channel.offer(element) }

    /// Elements that can be received without waiting.
    public var count: Int { channel.count }

    /// Whether no element can be received without waiting.
    public var isEmpty: Bool { channel.isEmpty }

    /// Closes the channel for sending; see `CoChannel.close()`.
    @discardableResult
    public func close() -> Bool { channel.close() }

    /// Whether the channel no longer accepts elements (closed or cancelled).
    public var isClosed: Bool { channel.isClosed }

    /// Cancels the channel; see `CoChannel.cancel()`.
    public func cancel() { channel.cancel() }

    /// Whether the channel was cancelled.
    public var isCanceled: Bool { channel.isCanceled }

    /// Calls `callback` once if the channel is cancelled.
    public func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
      channel.whenCanceled(callback)
    }

    /// Calls `callback` once when the channel is cancelled, or closed and drained.
    public func whenComplete(_ callback: @escaping () -> Void) { channel.whenComplete(callback) }
  }
}
