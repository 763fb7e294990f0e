/// The output of a stage that runs on its own (`PumpReceiving`): the channel its consumers
/// receive from, and how its stream ended.
///
/// A channel ends only closed or cancelled; a stream can also end with `.timeout` after the
/// elements it still buffers. The pump then records that error and closes the channel, and
/// consumers read the channel's `.closed` as the recorded error (`ending(_:)`).
@usableFromInline
final class StreamOutlet<Element>: @unchecked Sendable {
  // `@unchecked Sendable`: an immutable reference to a thread-safe channel, and an atomic.
  @usableFromInline let channel: CoChannel<Element>
  /// `CoChannelError.code` of the error the channel's close stands for; 0 for `.closed`.
  @usableFromInline let endCode = InlineByteAtomic<UInt8>(0)

  @usableFromInline init(_ channel: CoChannel<Element>) { self.channel = channel }

  /// What a consumer gets for `error`, the channel's: the recorded end for `.closed`.
  @inlinable func ending(_ error: CoChannelError) -> CoChannelError {
    guard error == .closed else { return error }
    // Acquiring: the pump records the end before it closes the channel.
    return CoChannelError(code: endCode.load(ordering: .acquiring)) ?? .closed
  }

  /// Hands `element` to the consumers, waiting while the channel cannot take it.
  ///
  /// - Throws: `CoChannelError.canceled` once the consumers cancelled the stream (the pump then
  ///   ends); `CoroutineError.canceled` if the pump is stopped.
  @inlinable func send(_ element: Element) throws { try channel.awaitSend(element) }

  /// Ends the stream with `error`: `.closed` lets consumers drain what is buffered, then end;
  /// `.canceled` drops it; any other error is delivered after the buffered elements.
  func finish(_ error: CoChannelError) {
    switch error {
    case .closed: channel.close()
    case .canceled: channel.cancel()
    default:
      endCode.store(error.code, ordering: .releasing)
      channel.close()
    }
  }
}

extension CoChannel.Receiver {
  /// For a stage's own coroutine: the next element, or `nil` once this receiver's stream has
  /// closed. Other ends (`.canceled`, `.timeout`) are thrown: they end the stage with them.
  @inlinable
  func nextOrClosed() throws -> Element? {
    do {
      return try awaitReceive()
    } catch CoChannelError.closed {
      return nil
    }
  }
}
