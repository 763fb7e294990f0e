extension CoChannel {
  /// The receive side of a channel, or of a stream derived from channels (`map`, `filter`,
  /// `CoChannel.merge`, `debounce`, a `BroadcastChannel` subscription, …): what consumers get
  /// when they must not send. Thread-safe, like the channel.
  ///
  /// ```swift
  /// func consume(_ numbers: CoChannel<Int>.Receiver) throws {
  ///   for number in numbers.makeIterator() { print(number) }
  /// }
  /// ```
  ///
  /// Every receiver works the same way whatever it reads from: `awaitReceive`, `poll`,
  /// `whenReceive`, `receiveFuture`, `select`, iteration (`makeIterator()`, `values`,
  /// `for await`) and `cancel()`. The Streams article says what each derived receiver does
  /// with its upstream.
  public final class Receiver: CoCancellable, @unchecked Sendable {
    // `@unchecked Sendable`: immutable references to a thread-safe channel or source.
    /// The channel itself when this receiver reads a channel: the hot paths call it directly,
    /// so they are specialized in client code.
    @usableFromInline let channel: CoChannel<Element>?
    /// `channel`, unretained (the receiver holds it through `source`): a receive calls it
    /// without retaining and releasing it around the call, which code that reached the receiver
    /// through another object (a stage's `base`) would otherwise do.
    @usableFromInline let unretainedChannel: Unmanaged<CoChannel<Element>>?
    /// A derived receiver's receive and poll, made where the stage was created (specialized
    /// there when that code is): the hot paths call them without going through `source`.
    ///
    /// They return the element through a pointer rather than as a result: a closure whose type
    /// mentions `Element`, kept in a generic class, is stored with `Element` passed indirectly,
    /// and calling it from code specialized for a concrete type goes through a reabstraction
    /// thunk that retains and releases the closure's context on every call. These types
    /// mention no type parameter, so caller and callee agree, and optional chaining calls them
    /// without retaining anything.
    @usableFromInline let derivedReceive: ((UnsafeMutableRawPointer) throws -> Void)?
    /// Initializes the element at the pointer and returns `true`, or returns `false` (nothing
    /// ready).
    @usableFromInline let derivedPoll: ((UnsafeMutableRawPointer) -> Bool)?
    /// Where every other operation goes: the channel, a derived stream's source, or the
    /// wrapper of a subscription.
    @usableFromInline let source: any ChannelReceiving<Element>

    @usableFromInline init(_ channel: CoChannel<Element>) {
      self.channel = channel
      unretainedChannel = .passUnretained(channel)
      derivedReceive = nil
      derivedPoll = nil
      source = channel
    }

    /// A receiver of `channel` whose other operations go through `source` (a subscription,
    /// whose source ends it when the receiver is released).
    init(_ channel: CoChannel<Element>, source: any ChannelReceiving<Element>) {
      self.channel = channel
      unretainedChannel = .passUnretained(channel)
      derivedReceive = nil
      derivedPoll = nil
      self.source = source
    }

    /// A derived receiver: `derived` receives and polls, `source` does everything else.
    /// A derived receiver: `receive` and `poll` (see `derivedReceive`) receive and poll,
    /// `source` does everything else.
    @inlinable convenience init(
      receive: @escaping () throws -> Element, poll: @escaping () -> Element?,
      source: any ChannelReceiving<Element>
    ) {
      self.init(
        derivedReceive: { try $0.initializeMemory(as: Element.self, to: receive()) },
        derivedPoll: { out in
          guard let element = poll() else { return false }
          out.initializeMemory(as: Element.self, to: element)
          return true
        }, source: source)
    }

    @usableFromInline init(
      derivedReceive: @escaping (UnsafeMutableRawPointer) throws -> Void,
      derivedPoll: @escaping (UnsafeMutableRawPointer) -> Bool,
      source: any ChannelReceiving<Element>
    ) {
      channel = nil
      unretainedChannel = nil
      self.derivedReceive = derivedReceive
      self.derivedPoll = derivedPoll
      self.source = source
    }

    /// The buffer type of the underlying channel (for a derived receiver, of the channel it
    /// reads from, or of its own buffer).
    public var bufferType: BufferType { source.receiverBufferType(as: Element.self) }

    /// Receives the next element; see `CoChannel.awaitReceive()`. A derived receiver ends
    /// with the error that ends its stream (`CoChannelError.closed`, `.canceled`,
    /// `.timeout`), as the Streams article describes for each stage.
    @inlinable
    public func awaitReceive() throws -> Element {
      if let unretainedChannel {
        return try unretainedChannel._withUnsafeGuaranteedRef { try $0.awaitReceive() }
      }
      if derivedReceive != nil {
        return try withUnsafeTemporaryAllocation(of: Element.self, capacity: 1) { slot in
          let element = slot.baseAddress.unsafelyUnwrapped
          try derivedReceive?(UnsafeMutableRawPointer(element))
          return element.move()
        }
      }
      return try sourceAwaitReceive()
    }

    @usableFromInline
    func sourceAwaitReceive() throws -> Element { try source.awaitReceive() }

    /// A future of the next element; see `CoChannel.receiveFuture()`.
    public func receiveFuture() -> CoFuture<Element> { source.receiveFuture() }

    /// Receives an element if one is ready; see `CoChannel.poll()`.
    @inlinable
    public func poll() -> Element? {
      if let unretainedChannel { return unretainedChannel._withUnsafeGuaranteedRef { $0.poll() } }
      if derivedPoll != nil {
        return withUnsafeTemporaryAllocation(of: Element.self, capacity: 1) { slot in
          let element = slot.baseAddress.unsafelyUnwrapped
          guard derivedPoll?(UnsafeMutableRawPointer(element)) == true else { return nil }
          return element.move()
        }
      }
      return sourcePoll()
    }

    @usableFromInline
    func sourcePoll() -> Element? { source.poll() }

    /// A receive that does not wait: the element or the ending error; `nil` if it would wait.
    @inlinable
    func receiveNow() -> Result<Element, CoChannelError>? {
      if let channel { return channel.performNow(ReceiveOperation()) }
      return source.receiveNow()
    }

    /// Calls `callback` with the next element or the ending error; see
    /// `CoChannel.whenReceive(_:)`.
    public func whenReceive(
      _ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void
    ) {
      source.whenReceive(callback)
    }

    /// Elements that can be received without waiting (for a receiver that drops elements,
    /// such as `filter`, at most that many).
    public var count: Int { source.count }

    /// Whether no element can be received without waiting.
    public var isEmpty: Bool { source.isEmpty }

    /// Whether the channel no longer accepts elements (closed or cancelled); for a derived
    /// receiver, whether its stream has ended or is draining its last elements.
    public var isClosed: Bool { source.isClosed }

    /// Cancels the channel; see `CoChannel.cancel()`. A derived receiver cancels what it
    /// consumes too, unless that is shared (a subscription ends only itself).
    public func cancel() { source.cancel() }

    /// Whether the channel (or the derived stream) was cancelled.
    public var isCanceled: Bool { source.isCanceled }

    /// Calls `callback` once if the channel is cancelled.
    public func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
      source.whenCanceled(callback)
    }

    /// Calls `callback` once when the channel is cancelled, or closed and drained.
    public func whenComplete(_ callback: @escaping () -> Void) { source.whenComplete(callback) }

    /// An iterator (and single-pass sequence) of the received elements, for loops inside a
    /// coroutine; see `CoChannel.makeIterator()`.
    @inlinable
    public func makeIterator() -> Iterator { Iterator(self) }
  }
}
