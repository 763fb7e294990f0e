import Dispatch

/// What a chaining block decided for the derived promise.
@usableFromInline
enum ChainOutcome<Value> {
  case fulfill(Value)
  case reject(any Error)
  case adopt(Promise<Value>)
}

extension Promise {
  /// Registers `observer` to run synchronously on the resolving thread (or at once, on this
  /// thread, when already resolved). The building block of every other observation.
  @inlinable func whenResolved(_ observer: @escaping ResolutionObserver<Value>) {
    if let result = cell.observe(observer) { observer(result) }
  }

  /// FBLPromise's `observeOnQueue`: runs `body` with the outcome asynchronously on `queue`,
  /// through `DispatchGroup.promises`, even when the promise is already resolved.
  @inlinable func observe(on queue: DispatchQueue, _ body: @escaping (Result<Value, any Error>) -> Void) {
    let observer: ErasedObserver = { outcome in
      PromiseDispatch.async(on: queue) { body(ResolutionCell<Value>.unbox(outcome)) }
    }
    if let outcome = cell.observeErased(observer) { observer(outcome) }
  }

  /// FBLPromise's `chainOnQueue`: a derived promise resolved by `transform` of this one's
  /// outcome, run on `queue`. A throw rejects the derived promise.
  ///
  /// The derived promise is kept alive only by this promise's observer list (and, when it
  /// adopts another promise, by that one's), so it is released once everything has run.
  @inlinable func chain<Derived>(
    on queue: DispatchQueue,
    _ transform: @escaping (Result<Value, any Error>) throws -> ChainOutcome<Derived>
  ) -> Promise<Derived> {
    let derived = Promise<Derived>()
    observe(on: queue) { result in
      do { derived.settle(try transform(result)) } catch { derived.reject(error) }
    }
    return derived
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
