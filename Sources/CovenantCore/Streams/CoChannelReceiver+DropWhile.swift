extension CoChannel.Receiver {
  /// A receiver of the elements received through this one from the first that does not
  /// satisfy `predicate` on: those before it are dropped, none after it.
  ///
  /// ```swift
  /// let afterWarmUp = samples.drop { $0.isWarmUp }
  /// ```
  ///
  /// `predicate` runs inside each receive, under the receiver's lock (it must not receive from
  /// this receiver), until it first returns `false`; ends, and is cancelled, with this
  /// receiver.
  @inlinable
  public func drop(while predicate: @escaping @Sendable (Element) -> Bool)
    -> CoChannel<Element>.Receiver
  {
    CoChannel<Element>.Receiver(
      view: StatefulViewReceiving(self, DropWhileStage(predicate: predicate)))
  }
}

/// `drop(while:)`'s stage: whether it is still dropping.
@usableFromInline
struct DropWhileStage<Element>: StreamStage {
  @usableFromInline let predicate: @Sendable (Element) -> Bool
  @usableFromInline var isDropping = true

  @inlinable init(predicate: @escaping @Sendable (Element) -> Bool) {
    self.predicate = predicate
  }

  @inlinable mutating func receive(_ input: Element) -> StageStep<Element> {
    if isDropping {
      if predicate(input) { return .skip }
      isDropping = false
    }
    return .emit(input)
  }
}
