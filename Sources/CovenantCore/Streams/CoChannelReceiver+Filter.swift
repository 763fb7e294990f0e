extension CoChannel.Receiver {
  /// A receiver of the elements received through this one that satisfy `isIncluded`; the
  /// others are dropped.
  ///
  /// ```swift
  /// let evens = numbers.filter { $0.isMultiple(of: 2) }
  /// ```
  ///
  /// Runs inside each receive like `map`; ends, and is cancelled, with this receiver. In a
  /// `select`, a case on a filtered receiver that receives a rejected element is not
  /// performed: the select goes on waiting (until its `onTimeout` deadline, if it has one).
  @inlinable
  public func filter(_ isIncluded: @escaping @Sendable (Element) -> Bool)
    -> CoChannel<Element>.Receiver
  {
    CoChannel<Element>.Receiver(view: ElementViewReceiving(self, FilterStage(isIncluded)))
  }
}

/// `filter`'s stage.
@usableFromInline
struct FilterStage<Element>: ElementStage {
  @usableFromInline let isIncluded: @Sendable (Element) -> Bool

  @inlinable init(_ isIncluded: @escaping @Sendable (Element) -> Bool) {
    self.isIncluded = isIncluded
  }

  @inlinable func apply(_ input: Element) -> Element? { isIncluded(input) ? input : nil }
}
