import Dispatch

/// Returns a promise that waits for all `promises` to settle and is fulfilled with their
/// outcomes, in the order given, if at least one was fulfilled; if all were rejected, it is
/// rejected with the error of the last to settle. With no promises it is fulfilled with `[]`.
///
/// ```swift
/// any([fetchAvatar(for: alice), fetchAvatar(for: bob)]).then { outcomes in
///   show(outcomes.compactMap(\.value))
/// }
/// ```
///
/// With two or three promises the tuple forms are chosen, as in google/promises, even when the
/// promises have the same type; state the array type or pass an array for this form.
@_disfavoredOverload  // the tuple forms win for two to four promises, as in google/promises
public func any<Value>(
  on queue: DispatchQueue = .promises,
  _ promises: Promise<Value>...
) -> Promise<[Maybe<Value>]> {
  any(on: queue, promises)
}

/// Returns a promise that waits for all `promises` to settle and is fulfilled with their
/// outcomes, in order, if at least one was fulfilled; if all were rejected, it is rejected with
/// the error of the last to settle. With no promises it is fulfilled with `[]`.
public func any<Value, Promises: Sequence>(
  on queue: DispatchQueue = .promises,
  _ promises: Promises
) -> Promise<[Maybe<Value>]> where Promises.Element == Promise<Value> {
  let sources = Array(promises)
  return whenAllSettled(on: queue, count: sources.count, { sources[$0].observe(on: queue, $1) }) {
    $0
  }
}

/// Returns a promise that waits for both promises to settle and is fulfilled with both
/// outcomes if at least one was fulfilled; if both were rejected, it is rejected with the error
/// of the last to settle.
///
/// ```swift
/// any(fetchAvatar(for: user), fetchCover(for: user)).then { avatar, cover in
///   show(avatar.value ?? .placeholder, cover.value)
/// }
/// ```
public func any<A, B>(
  on queue: DispatchQueue = .promises,
  _ promiseA: Promise<A>,
  _ promiseB: Promise<B>
) -> Promise<(Maybe<A>, Maybe<B>)> {
  let sources = [promiseA.observeErased, promiseB.observeErased]
  return whenAllSettled(on: queue, count: 2, { sources[$0](queue, $1) }) {
    ($0[0].cast(to: A.self), $0[1].cast(to: B.self))
  }
}

/// Returns a promise that waits for the three promises to settle and is fulfilled with their
/// outcomes if at least one was fulfilled; if all were rejected, it is rejected with the error
/// of the last to settle.
public func any<A, B, C>(
  on queue: DispatchQueue = .promises,
  _ promiseA: Promise<A>,
  _ promiseB: Promise<B>,
  _ promiseC: Promise<C>
) -> Promise<(Maybe<A>, Maybe<B>, Maybe<C>)> {
  let sources = [promiseA.observeErased, promiseB.observeErased, promiseC.observeErased]
  return whenAllSettled(on: queue, count: 3, { sources[$0](queue, $1) }) {
    ($0[0].cast(to: A.self), $0[1].cast(to: B.self), $0[2].cast(to: C.self))
  }
}

/// The engine of every `any`: once each of the `count` sources has reported, a promise
/// fulfilled with `combine(outcomes)` if any reported a value, else rejected with the error
/// reported last.
func whenAllSettled<Element, Combined>(
  on queue: DispatchQueue,
  count: Int,
  _ observe: SourceObservation<Element>,
  combine: @escaping ([Maybe<Element>]) -> Combined
) -> Promise<Combined> {
  guard count > 0 else { return Promise<Combined>(result: .success(combine([]))) }
  let combined = Promise<Combined>()
  let collector = OutcomeCollector<Maybe<Element>>(count: count)
  for index in 0..<count {
    observe(index) { outcome in
      let maybe: Maybe<Element>
      switch outcome {
      case .success(let value): maybe = .value(value)
      case .failure(let error): maybe = .error(error)
      }
      guard let outcomes = collector.record(maybe, at: index) else { return }
      if case .error(let lastError) = maybe, !outcomes.contains(where: \.isValue) {
        combined.reject(lastError)
      } else {
        combined.fulfill(combine(outcomes))
      }
    }
  }
  return combined
}

extension Maybe {
  fileprivate var isValue: Bool {
    if case .value = self { return true }
    return false
  }
}

extension Maybe<Any> {
  fileprivate func cast<T>(to type: T.Type) -> Maybe<T> {
    switch self {
    case .value(let value): return .value(value as! T)
    case .error(let error): return .error(error)
    }
  }
}
