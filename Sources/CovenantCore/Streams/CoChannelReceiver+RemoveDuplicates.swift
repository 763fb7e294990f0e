extension CoChannel.Receiver where Element: Equatable {
  /// A receiver of the elements received through this one, without those equal to the element
  /// just before them (swift-async-algorithms' `removeDuplicates()`, Kotlin Flow's
  /// `distinctUntilChanged()`).
  ///
  /// ```swift
  /// let changes = readings.removeDuplicates()     // 1, 1, 2, 2, 1 → 1, 2, 1
  /// ```
  ///
  /// Runs inside each receive, under the receiver's lock; ends, and is cancelled, with this
  /// receiver.
  @inlinable
  public func removeDuplicates() -> CoChannel<Element>.Receiver {
    CoChannel<Element>.Receiver(view: StatefulViewReceiving(self, RemoveEqualDuplicatesStage()))
  }
}

extension CoChannel.Receiver {
  /// A receiver of the elements received through this one, without those that `predicate`
  /// says duplicate the element just before them (`predicate(previous, element)` is `true`).
  ///
  /// ```swift
  /// let newUsers = users.removeDuplicates { $0.id == $1.id }
  /// ```
  ///
  /// `predicate` runs under the receiver's lock: it must not receive from this receiver.
  @inlinable
  public func removeDuplicates(
    by predicate: @escaping @Sendable (Element, Element) -> Bool
  ) -> CoChannel<Element>.Receiver {
    CoChannel<Element>.Receiver(
      view: StatefulViewReceiving(self, RemoveDuplicatesStage(predicate: predicate)))
  }
}

/// `removeDuplicates`' stage: the last element handed over.
@usableFromInline
struct RemoveDuplicatesStage<Element>: StreamStage {
  @usableFromInline let predicate: @Sendable (Element, Element) -> Bool
  @usableFromInline var last: Element?

  @inlinable init(predicate: @escaping @Sendable (Element, Element) -> Bool) {
    self.predicate = predicate
  }

  @inlinable mutating func receive(_ input: Element) -> StageStep<Element> {
    if let last, predicate(last, input) { return .skip }
    last = input
    return .emit(input)
  }
}

/// `removeDuplicates()`' stage: the last element handed over, compared with `==`.
@usableFromInline
struct RemoveEqualDuplicatesStage<Element: Equatable>: StreamStage {
  @usableFromInline var last: Element?

  @inlinable init() {}

  @inlinable mutating func receive(_ input: Element) -> StageStep<Element> {
    if let last, last == input { return .skip }
    last = input
    return .emit(input)
  }
}
