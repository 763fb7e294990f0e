import Dispatch

extension Promise {
  /// Registers `observer` to run synchronously on the resolving thread (or at once, on this
  /// thread, when already resolved). The building block of the synchronous observations.
  @inlinable func whenResolved(_ observer: @escaping (Result<Value, any Error>) -> Void) {
    cell.whenResolved(observer)
  }

  /// Registers `reaction` (a `reaction`): in the chain while pending, or told at once.
  @inlinable func add(_ reaction: Reaction) {
    if !cell.register(reaction) { ResolutionCell.tell(reaction, owner: self) }
  }

  /// FBLPromise's `observeOnQueue`: runs `body` with the outcome asynchronously on `queue`,
  /// through `DispatchGroup.promises`, even when the promise is already resolved.
  @inlinable func observe(
    on queue: DispatchQueue, _ body: @escaping (Result<Value, any Error>) -> Void
  ) {
    add(TransformReaction<Value, Void>(queue: queue, derived: nil, observe: body))
  }

  /// FBLPromise's `chainOnQueue`: a derived promise resolved by `transform` of this one's
  /// outcome, run on `queue`. A throw rejects the derived promise.
  ///
  /// The derived promise is kept alive only by this promise's observer chain (and, when it
  /// adopts another promise, by that one's), so it is released once everything has run.
  @inlinable func chain<Derived>(
    on queue: DispatchQueue,
    _ transform: @escaping (Result<Value, any Error>) throws -> ChainOutcome<Derived>
  ) -> Promise<Derived> {
    let derived = Promise<Derived>()
    add(TransformReaction(queue: queue, derived: derived, transform: transform))
    return derived
  }

  /// `then`'s value form as one `reaction`: `map` runs on `queue` with the value.
  @inlinable func chainMap<Derived>(
    on queue: DispatchQueue, _ map: @escaping (Value) throws -> Derived
  ) -> Promise<Derived> {
    let derived = Promise<Derived>()
    add(ThenReaction(queue: queue, derived: derived, map: map))
    return derived
  }

  /// `then`'s `Void` form as one `reaction`: `work` runs on `queue` with the value, which
  /// is then passed on.
  @inlinable func chainPassingThrough(
    on queue: DispatchQueue, _ work: @escaping (Value) throws -> Void
  ) -> Promise<Value> {
    let derived = Promise<Value>()
    add(ThenReaction(queue: queue, derived: derived, passThrough: work))
    return derived
  }

  /// Fulfils with what a `then` block returned, or rejects when it returned an error (see
  /// `returnedError`).
  @inlinable func fulfillReturned(_ value: Value) {
    if let error = returnedError(value) { reject(error) } else { fulfill(value) }
  }

  /// Resolves with `outcome`, adopting a returned promise's eventual outcome without a hop.
  @inlinable func settle(_ outcome: ChainOutcome<Value>) {
    switch outcome {
    case .fulfill(let value): fulfill(value)
    case .reject(let error): reject(error)
    case .adopt(let other):
      guard other !== self else {
        reject(PromiseError.validationFailure)  // a promise cannot wait for itself
        return
      }
      other.whenResolved { [self] in resolve($0) }
    }
  }

  /// Keeps this promise alive until it is resolved (the work-block initializers' contract).
  func retainUntilResolved() {
    whenResolved { [self] _ in withExtendedLifetime(self) {} }
  }
}
