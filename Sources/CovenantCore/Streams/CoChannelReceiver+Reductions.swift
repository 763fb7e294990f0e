extension CoChannel.Receiver {
  /// A receiver of the running results of combining the elements received through this one
  /// with `next`, starting from `initial` (swift-async-algorithms' `reductions(_:_:)`, Kotlin
  /// Flow's `runningFold` without its first value): `initial` itself is not emitted.
  ///
  /// ```swift
  /// let totals = amounts.reductions(0, +)      // 3, 4, 5 → 3, 7, 12
  /// ```
  ///
  /// `next` runs inside each receive, under the receiver's lock (it must not receive from this
  /// receiver); ends, and is cancelled, with this receiver.
  @inlinable
  public func reductions<Result>(
    _ initial: Result, _ next: @escaping @Sendable (Result, Element) -> Result
  ) -> CoChannel<Result>.Receiver {
    CoChannel<Result>.Receiver(
      view: StatefulViewReceiving(self, ReductionsStage(initial: initial, next: next)))
  }
}

/// `reductions`' stage: the running result.
@usableFromInline
struct ReductionsStage<Input, Output>: StreamStage {
  @usableFromInline let next: @Sendable (Output, Input) -> Output
  @usableFromInline var accumulator: Output

  @inlinable init(initial: Output, next: @escaping @Sendable (Output, Input) -> Output) {
    accumulator = initial
    self.next = next
  }

  @inlinable mutating func receive(_ input: Input) -> StageStep<Output> {
    accumulator = next(accumulator, input)
    return .emit(accumulator)
  }
}
