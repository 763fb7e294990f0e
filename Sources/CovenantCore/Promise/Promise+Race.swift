import Dispatch

/// Returns a promise resolved like the first of `promises` to settle, fulfilled or rejected;
/// later outcomes are ignored.
///
/// - Precondition: `promises` is not empty.
///
/// ```swift
/// race(fetchFromCache(key), fetchFromNetwork(key)).then { show($0) }
/// ```
public func race<Value>(
  on queue: DispatchQueue = .promises,
  _ promises: Promise<Value>...
) -> Promise<Value> {
  race(on: queue, promises)
}

/// Returns a promise resolved like the first of `promises` to settle, fulfilled or rejected;
/// later outcomes are ignored.
///
/// - Precondition: `promises` is not empty.
public func race<Value>(
  on queue: DispatchQueue = .promises,
  _ promises: [Promise<Value>]
) -> Promise<Value> {
  // fatalError, not precondition: an optimized build drops a precondition's message.
  if promises.isEmpty {
    fatalError("race(_:) needs at least one promise: a race of none can never be won")
  }
  let winner = Promise<Value>()
  for promise in promises {
    promise.observe(on: queue) { outcome in winner.resolve(outcome) }
  }
  return winner
}
