import Dispatch

/// Returns a promise fulfilled with the values of all `promises`, in the order given, once all
/// are fulfilled; it is rejected as soon as any of them is rejected, with that error. With no
/// promises it is fulfilled with `[]`.
///
/// ```swift
/// all(fetchAvatar(for: alice), fetchAvatar(for: bob), fetchAvatar(for: carol),
///     fetchAvatar(for: dave), fetchAvatar(for: eve)).then { avatars in show(avatars) }
/// ```
///
/// With two to four promises the tuple forms are chosen, as in google/promises, even when the
/// promises have the same type (`all(a, b).then { pair in pair.0 }`); state the array type
/// (`let both: Promise<[User]> = all(a, b)`) or pass an array for this form.
@_disfavoredOverload  // the tuple forms win for two to four promises, as in google/promises
public func all<Value>(
  on queue: DispatchQueue = .promises,
  _ promises: Promise<Value>...
) -> Promise<[Value]> {
  all(on: queue, promises)
}

/// Returns a promise fulfilled with the values of all `promises`, in order, once all are
/// fulfilled; it is rejected as soon as any of them is rejected, with that error. With no
/// promises it is fulfilled with `[]`.
///
/// ```swift
/// all(ids.map(fetchUser)).then { users in show(users) }
/// ```
public func all<Value, Promises: Sequence>(
  on queue: DispatchQueue = .promises,
  _ promises: Promises
) -> Promise<[Value]> where Promises.Element == Promise<Value> {
  let sources = Array(promises)
  return whenAllFulfilled(on: queue, count: sources.count, { sources[$0].observe(on: queue, $1) }) {
    $0
  }
}

/// Returns a promise fulfilled with both values once both promises are fulfilled; it is
/// rejected as soon as either is rejected.
///
/// Chosen for any two promises, of the same type too: `all(a, b)` is a `Promise<(A, B)>`, as in
/// google/promises.
///
/// ```swift
/// all(fetchAvatar(for: user), fetchCover(for: user)).then { avatar, cover in show(avatar, cover) }
/// ```
public func all<A, B>(
  on queue: DispatchQueue = .promises,
  _ promiseA: Promise<A>,
  _ promiseB: Promise<B>
) -> Promise<(A, B)> {
  let sources = [promiseA.observeErased, promiseB.observeErased]
  return whenAllFulfilled(on: queue, count: 2, { sources[$0](queue, $1) }) {
    ($0[0] as! A, $0[1] as! B)
  }
}

/// Returns a promise fulfilled with the three values once all three promises are fulfilled; it
/// is rejected as soon as any is rejected.
public func all<A, B, C>(
  on queue: DispatchQueue = .promises,
  _ promiseA: Promise<A>,
  _ promiseB: Promise<B>,
  _ promiseC: Promise<C>
) -> Promise<(A, B, C)> {
  let sources = [promiseA.observeErased, promiseB.observeErased, promiseC.observeErased]
  return whenAllFulfilled(on: queue, count: 3, { sources[$0](queue, $1) }) {
    ($0[0] as! A, $0[1] as! B, $0[2] as! C)
  }
}

/// Returns a promise fulfilled with the four values once all four promises are fulfilled; it
/// is rejected as soon as any is rejected.
public func all<A, B, C, D>(
  on queue: DispatchQueue = .promises,
  _ promiseA: Promise<A>,
  _ promiseB: Promise<B>,
  _ promiseC: Promise<C>,
  _ promiseD: Promise<D>
) -> Promise<(A, B, C, D)> {
  let sources = [
    promiseA.observeErased, promiseB.observeErased, promiseC.observeErased,
    promiseD.observeErased,
  ]
  return whenAllFulfilled(on: queue, count: 4, { sources[$0](queue, $1) }) {
    ($0[0] as! A, $0[1] as! B, $0[2] as! C, $0[3] as! D)
  }
}

/// The engine of every `all`: a promise fulfilled with `combine(values)` once each of the
/// `count` sources has reported a value, rejected at the first error reported.
///
/// The combined promise is held only by the sources' observers, so it is released once all
/// have run (or all sources are gone).
func whenAllFulfilled<Element, Combined>(
  on queue: DispatchQueue,
  count: Int,
  _ observe: SourceObservation<Element>,
  combine: @escaping ([Element]) -> Combined
) -> Promise<Combined> {
  guard count > 0 else { return Promise<Combined>(result: .success(combine([]))) }
  let combined = Promise<Combined>()
  let collector = OutcomeCollector<Element>(count: count)
  for index in 0..<count {
    observe(index) { outcome in
      switch outcome {
      case .failure(let error):
        combined.reject(error)
      case .success(let value):
        if let values = collector.record(value, at: index) { combined.fulfill(combine(values)) }
      }
    }
  }
  return combined
}
