/// What a `CoChannel.Receiver` reads from: the channel itself, or the source of a derived
/// stream (`Streams/`). (A protocol rather than subclasses, so that `Receiver` stays a final
/// class.)
@usableFromInline
protocol ChannelReceiving<Element>: AnyObject, Sendable {
  associatedtype Element
  func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType
  func awaitReceive() throws -> Element
  func receiveFuture() -> CoFuture<Element>
  func poll() -> Element?
  func whenReceive(_ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void)
  var count: Int { get }
  var isEmpty: Bool { get }
  var isClosed: Bool { get }
  func cancel()
  var isCanceled: Bool { get }
  func whenCanceled(_ callback: @escaping @Sendable () -> Void)
  func whenComplete(_ callback: @escaping () -> Void)
  /// A receive that does not wait: the element or the ending error; `nil` if it would wait.
  func receiveNow() -> Result<Element, CoChannelError>?
  /// Keeps a `select` receive case on this source in the uninitialized `slot`.
  func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Element, Output>)
  /// Whether a receive would complete at once with an outcome the source already holds (an
  /// element a cancelled receive future left behind), which `selectUnbiased` must not pass over
  /// while it waits for upstream.
  var holdsReadyOutcome: Bool { get }
}

extension ChannelReceiving {
  @usableFromInline var holdsReadyOutcome: Bool { false }
}

extension CoChannel: ChannelReceiving {
  @usableFromInline func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType {
    bufferType.converted()
  }

  @usableFromInline func receiveNow() -> Result<Element, CoChannelError>? {
    performNow(ReceiveOperation())
  }

  @usableFromInline func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Element, Output>
  ) {
    SelectSlotOperations.initialize(slot, channel: self, SelectPayload(ReceiveOperation(), body))
  }
}

extension CoChannel.BufferType {
  /// The same buffer type, as seen through a channel of another element type.
  func converted<T>() -> CoChannel<T>.BufferType {
    switch self {
    case .none: return .none
    case .buffered(let capacity): return .buffered(capacity: capacity)
    case .unlimited: return .unlimited
    case .conflated: return .conflated
    }
  }
}
