extension CoChannel.Receiver {
  /// A receiver of `transform` applied to each element received through this one (Kotlin
  /// Flow's and swift-async-algorithms' `map`).
  ///
  /// ```swift
  /// let lengths = words.receiver.map { $0.count }      // CoChannel<Int>.Receiver
  /// ```
  ///
  /// The transform runs inside each receive, on the receiving thread: no coroutine, no task and
  /// no allocation per element. The stream ends when this receiver's does, with its error;
  /// cancelling it cancels this receiver.
  @inlinable
  public func map<T>(_ transform: @escaping @Sendable (Element) -> T) -> CoChannel<T>.Receiver {
    CoChannel<T>.Receiver(view: ElementViewReceiving(self, MapStage(transform)))
  }
}

extension CoChannel {
  /// A receiver of `transform` applied to each element received from this channel (see
  /// `CoChannel.Receiver.map(_:)`).
  ///
  /// ```swift
  /// let lengths = words.map { $0.count }      // CoChannel<Int>.Receiver
  /// ```
  @inlinable
  public func map<T>(_ transform: @escaping @Sendable (Element) -> T) -> CoChannel<T>.Receiver {
    receiver.map(transform)
  }
}

/// `map`'s stage.
@usableFromInline
struct MapStage<Input, Output>: ElementStage {
  @usableFromInline let transform: @Sendable (Input) -> Output

  @inlinable init(_ transform: @escaping @Sendable (Input) -> Output) {
    self.transform = transform
  }

  @inlinable func apply(_ input: Input) -> Output? { transform(input) }

  @inlinable static var dropsElements: Bool { false }
}
