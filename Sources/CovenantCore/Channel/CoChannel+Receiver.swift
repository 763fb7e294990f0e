extension CoChannel {
  /// The receive side of a channel (or a `map` of one): what consumers get when they must not
  /// send. Thread-safe, like the channel.
  ///
  /// ```swift
  /// func consume(_ numbers: CoChannel<Int>.Receiver) throws {
  ///   for number in numbers.makeIterator() { print(number) }
  /// }
  /// ```
  public final class Receiver: CoCancellable, Sendable {
    /// The channel itself when this is not a mapped receiver: the hot paths call it directly,
    /// so they are specialized in client code.
    @usableFromInline let channel: CoChannel<Element>?
    /// Where every other operation goes (the channel, or a mapped view).
    let source: any ChannelReceiving<Element>

    @usableFromInline init(_ channel: CoChannel<Element>) {
      self.channel = channel
      source = channel
    }

    init(mapped source: any ChannelReceiving<Element>) {
      channel = nil
      self.source = source
    }

    /// The buffer type of the underlying channel.
    public var bufferType: BufferType { source.receiverBufferType(as: Element.self) }

    /// Receives the next element; see `CoChannel.awaitReceive()`.
    @inlinable
    public func awaitReceive() throws -> Element {
      if let channel { return try channel.awaitReceive() }
      return try sourceAwaitReceive()
    }

    @usableFromInline
    func sourceAwaitReceive() throws -> Element { try source.awaitReceive() }

    /// A future of the next element; see `CoChannel.receiveFuture()`.
    public func receiveFuture() -> CoFuture<Element> { source.receiveFuture() }

    /// Receives an element if one is ready; see `CoChannel.poll()`.
    @inlinable
    public func poll() -> Element? {
      if let channel { return channel.poll() }
      return sourcePoll()
    }

    @usableFromInline
    func sourcePoll() -> Element? { source.poll() }

    /// Calls `callback` with the next element or the ending error; see
    /// `CoChannel.whenReceive(_:)`.
    public func whenReceive(
      _ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void
    ) {
      source.whenReceive(callback)
    }

    /// Elements that can be received without waiting.
    public var count: Int { source.count }

    /// Whether no element can be received without waiting.
    public var isEmpty: Bool { source.isEmpty }

    /// Whether the channel no longer accepts elements (closed or cancelled).
    public var isClosed: Bool { source.isClosed }

    /// Cancels the channel; see `CoChannel.cancel()`.
    public func cancel() { source.cancel() }

    /// Whether the channel was cancelled.
    public var isCanceled: Bool { source.isCanceled }

    /// Calls `callback` once if the channel is cancelled.
    public func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
      source.whenCanceled(callback)
    }

    /// Calls `callback` once when the channel is cancelled, or closed and drained.
    public func whenComplete(_ callback: @escaping () -> Void) { source.whenComplete(callback) }

    /// A receiver of `transform` applied to each element received through this one. The
    /// transform runs on the receiving side, as each element is received.
    public func map<T>(_ transform: @escaping @Sendable (Element) -> T) -> CoChannel<T>.Receiver {
      CoChannel<T>.Receiver(mapped: MappedReceiving(self, transform))
    }

    /// An iterator (and single-pass sequence) of the received elements, for loops inside a
    /// coroutine; see `CoChannel.makeIterator()`.
    @inlinable
    public func makeIterator() -> Iterator { Iterator(self) }
  }

  /// A receiver of `transform` applied to each element received from this channel.
  ///
  /// ```swift
  /// let lengths = words.map { $0.count }      // CoChannel<Int>.Receiver
  /// ```
  public func map<T>(_ transform: @escaping @Sendable (Element) -> T) -> CoChannel<T>.Receiver {
    receiver.map(transform)
  }
}

/// The source of a mapped receiver: receives from `base` and transforms each element.
final class MappedReceiving<Base, Element>: ChannelReceiving, Sendable {
  let base: CoChannel<Base>.Receiver
  let transform: @Sendable (Base) -> Element

  init(_ base: CoChannel<Base>.Receiver, _ transform: @escaping @Sendable (Base) -> Element) {
    self.base = base
    self.transform = transform
  }

  func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType {
    base.source.receiverBufferType(as: T.self)
  }

  func awaitReceive() throws -> Element { transform(try base.awaitReceive()) }
  func receiveFuture() -> CoFuture<Element> { base.receiveFuture().map(transform) }
  func poll() -> Element? { base.poll().map(transform) }
  func whenReceive(_ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void) {
    let transform = transform
    base.whenReceive { callback($0.map(transform)) }
  }
  var count: Int { base.count }
  var isEmpty: Bool { base.isEmpty }
  var isClosed: Bool { base.isClosed }
  func cancel() { base.cancel() }
  var isCanceled: Bool { base.isCanceled }
  func whenCanceled(_ callback: @escaping @Sendable () -> Void) { base.whenCanceled(callback) }
  func whenComplete(_ callback: @escaping () -> Void) { base.whenComplete(callback) }

  func receiveNow() -> Result<Element, CoChannelError>? {
    base.source.receiveNow().map { $0.map(transform) }
  }

  func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Element, Output>
  ) {
    let transform = transform
    base.source.initializeSelectSlot(slot, .result { try body.run(with: $0.map(transform)) })
  }
}
