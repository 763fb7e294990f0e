/// A stage with state, run inside the consumer's receive under its receiver's lock
/// (`removeDuplicates`, `reductions`, `prefix`, `drop(while:)`, `chunked(byCount:)`).
///
/// Its closures run under that lock: they must not receive from the receiver they belong to.
@usableFromInline
protocol StreamStage<Input, Output> {
  associatedtype Input
  associatedtype Output
  /// What comes out for `input`.
  mutating func receive(_ input: Input) -> StageStep<Output>
  /// Upstream ended with `error`: a last element to hand over before the end, if any
  /// (`chunked`'s partial chunk).
  mutating func finish(_ error: CoChannelError) -> Output?
  /// Whether the stream is over before any input (`prefix(0)`).
  var isFinished: Bool { get }
  /// Whether the stage holds elements it has not handed over yet (a partial chunk): the stream
  /// is then not complete when its upstream is.
  var isHoldingElements: Bool { get }
}

extension StreamStage {
  @inlinable mutating func finish(_ error: CoChannelError) -> Output? { nil }
  @inlinable var isFinished: Bool { false }
  @inlinable var isHoldingElements: Bool { false }
}

/// What a `StreamStage` makes of one element.
@usableFromInline
enum StageStep<Output> {
  /// Hand `Output` over.
  case emit(Output)
  /// Nothing to hand over: receive again.
  case skip
  /// Hand `Output` over; the stream is then over, and its upstream is cancelled (`prefix`'s
  /// last element).
  case emitLast(Output)
}
