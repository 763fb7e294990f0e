extension CoChannel.Receiver {
  /// A receiver of the non-`nil` results of `transform` applied to each element received
  /// through this one; elements it maps to `nil` are dropped.
  ///
  /// ```swift
  /// let numbers = lines.compactMap { Int($0) }      // CoChannel<Int>.Receiver
  /// ```
  ///
  /// Runs inside each receive like `map`; ends, and is cancelled, with this receiver.
  @inlinable
  public func compactMap<T>(_ transform: @escaping @Sendable (Element) -> T?)
    -> CoChannel<T>.Receiver
  {
    CoChannel<T>.Receiver(view: ElementViewReceiving(self, CompactMapStage(transform)))
  }
}

/// `compactMap`'s stage.
@usableFromInline
struct CompactMapStage<Input, Output>: ElementStage {
  @usableFromInline let transform: @Sendable (Input) -> Output?

  @inlinable init(_ transform: @escaping @Sendable (Input) -> Output?) {
    self.transform = transform
  }

  @inlinable func apply(_ input: Input) -> Output? { transform(input) }
}
