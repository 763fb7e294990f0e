/// A reaction that calls a closure with the outcome, synchronously on the resolving thread:
/// `whenResolved` observers of promises and futures (and everything built on them).
@usableFromInline
// `@unchecked Sendable` (restated from `Reaction`): one immutable closure, called once by the
// resolving thread (the closure need not be `@Sendable`: the cell's lock orders registration
// before the call).
final class ClosureReaction<Value>: Reaction, @unchecked Sendable {
  @usableFromInline let callback: (Result<Value, any Error>) -> Void

  @inlinable init(_ callback: @escaping (Result<Value, any Error>) -> Void) {
    self.callback = callback
  }

  @usableFromInline override func observedResolution(
    of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer
  ) {
    callback(
      cell.assumingMemoryBound(to: ResolutionCell.self).pointee.resolvedResult(as: Value.self))
  }
}
