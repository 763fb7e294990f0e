import Dispatch

/// Every other chained step: `transform` decides `derived`'s outcome from the source's
/// `Result` (`catch`, `recover`, `always`, `validate`, a `then` returning a promise, …), or
/// `observe` is just told the outcome (FBLPromise's `observeOnQueue`, for `all`, `any`, `race`).
@usableFromInline
// `@unchecked Sendable` (restated from `Reaction`): immutable fields, set before the step is
// registered; the step runs once, on its queue.
final class TransformReaction<Source, Derived>: QueuedReaction, @unchecked Sendable {
  @usableFromInline let derived: Promise<Derived>?
  @usableFromInline let transform: ((Result<Source, any Error>) throws -> ChainOutcome<Derived>)?
  @usableFromInline let observe: ((Result<Source, any Error>) -> Void)?

  @inlinable init(
    queue: DispatchQueue, derived: Promise<Derived>?,
    transform: ((Result<Source, any Error>) throws -> ChainOutcome<Derived>)? = nil,
    observe: ((Result<Source, any Error>) -> Void)? = nil
  ) {
    assert(
      (transform != nil && derived != nil && observe == nil)
        || (transform == nil && derived == nil && observe != nil),
      "a chained step either derives a promise or observes")
    self.derived = derived
    self.transform = transform
    self.observe = observe
    super.init(queue: queue)
  }

  override func runStep(_ cell: UnsafePointer<ResolutionCell>) {
    let result = cell.pointee.resolvedResult(as: Source.self)
    if let transform, let derived {
      do { derived.settle(try transform(result)) } catch { derived.reject(error) }
    } else if let observe {
      observe(result)
    }
  }
}
