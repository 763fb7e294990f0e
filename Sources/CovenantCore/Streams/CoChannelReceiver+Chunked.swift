extension CoChannel.Receiver {
  /// A receiver of the elements received through this one in arrays of `count` (swift-async-
  /// algorithms' `chunks(ofCount:)`, Kotlin Flow's `chunked`). When this receiver's stream
  /// closes (or ends with `.timeout`), the last, shorter chunk is handed over before the end;
  /// when it is cancelled, a partial chunk is dropped with it.
  ///
  /// ```swift
  /// let batches = lines.chunked(byCount: 100)      // CoChannel<[String]>.Receiver
  /// ```
  ///
  /// Runs inside each receive, under the receiver's lock; cancelling it cancels this receiver.
  /// `chunked(byCount:orWithin:)` also hands a chunk over once it is old enough.
  ///
  /// - Precondition: `count` is at least 1.
  @inlinable
  public func chunked(byCount count: Int) -> CoChannel<[Element]>.Receiver {
    precondition(count >= 1, "CoChannel.Receiver.chunked(byCount:) needs a count of 1 or more")
    return CoChannel<[Element]>.Receiver(
      view: StatefulViewReceiving(self, ChunkedStage<Element>(count: count)))
  }
}

/// `chunked(byCount:)`'s stage: the chunk being filled.
@usableFromInline
struct ChunkedStage<Element>: StreamStage {
  @usableFromInline let count: Int
  @usableFromInline var chunk: [Element] = []

  @inlinable init(count: Int) { self.count = count }

  @inlinable mutating func receive(_ input: Element) -> StageStep<[Element]> {
    if chunk.isEmpty { chunk.reserveCapacity(count) }
    chunk.append(input)
    guard chunk.count == count else { return .skip }
    defer { chunk = [] }
    return .emit(chunk)
  }

  @inlinable mutating func finish(_ error: CoChannelError) -> [Element]? {
    guard !chunk.isEmpty else { return nil }
    defer { chunk = [] }
    return chunk
  }

  @inlinable var isHoldingElements: Bool { !chunk.isEmpty }
}
