import Dispatch

// `wrap` turns a callback-taking API into a promise: `work` runs on `queue` and is handed a
// completion handler; the promise is resolved by the first call of that handler (later calls
// are ignored), or rejected if `work` throws. The promise keeps itself alive until resolved.
//
// The `V?` shapes are `@_disfavoredOverload`: the plain `V` shapes already cover them (with
// `V` an optional type, giving the same `Promise<V?>`), and a handler of a non-optional type
// must not be taken for an optional one when the closure has several statements.

/// Wraps an API whose completion handler takes no arguments; the promise is fulfilled when it
/// is called.
///
/// ```swift
/// wrap { done in animator.run(completion: done) }.then { showNextScreen() }
/// ```
@discardableResult
public func wrap(
  on queue: DispatchQueue = .promises,
  _ work: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) throws -> Void
) -> Promise<Void> {
  Promise<Void>(on: queue) { fulfill, _ in try work { fulfill(()) } }
}

/// google/promises' form of `wrap` for a handler without arguments: a `Promise<Any?>` fulfilled
/// with `nil`. Chosen only when the context asks for `Promise<Any?>`.
///
/// ```swift
/// let done: Promise<Any?> = wrap { handler in animator.run(completion: handler) }
/// ```
@_disfavoredOverload
@discardableResult
public func wrap(
  on queue: DispatchQueue = .promises,
  _ work: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) throws -> Void
) -> Promise<Any?> {
  Promise<Any?>(on: queue) { fulfill, _ in try work { fulfill(nil) } }
}

/// Wraps an API whose completion handler takes a value; the promise is fulfilled with it.
///
/// ```swift
/// wrap { handler in geocoder.lookUp(address, completion: handler) }   // Promise<Location>
/// ```
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work: @escaping @Sendable (_ handler: @escaping @Sendable (Value) -> Void) throws -> Void
) -> Promise<Value> {
  Promise<Value>(on: queue) { fulfill, _ in try work { fulfill($0) } }
}

/// Wraps an API whose completion handler takes an optional value; the promise is fulfilled
/// with it, `nil` included.
@_disfavoredOverload
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work: @escaping @Sendable (_ handler: @escaping @Sendable (Value?) -> Void) throws -> Void
) -> Promise<Value?> {
  Promise<Value?>(on: queue) { fulfill, _ in try work { fulfill($0) } }
}

/// Wraps an API whose completion handler takes an optional error; the promise is rejected with
/// a non-`nil` error, else fulfilled.
///
/// ```swift
/// wrap { handler in file.write(data, completion: handler) }.then { print("saved") }
/// ```
@discardableResult
public func wrap(
  on queue: DispatchQueue = .promises,
  _ work: @escaping @Sendable (_ handler: @escaping @Sendable ((any Error)?) -> Void) throws -> Void
) -> Promise<Void> {
  Promise<Void>(on: queue) { fulfill, reject in
    try work { error in
      if let error { reject(error) } else { fulfill(()) }
    }
  }
}

/// Wraps an API whose completion handler takes a value and an optional error; the promise is
/// rejected with a non-`nil` error, else fulfilled with the value.
///
/// ```swift
/// wrap { handler in store.count(completion: handler) }   // handler: (Int, Error?) -> Void
/// ```
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work:
    @escaping @Sendable (_ handler: @escaping @Sendable (Value, (any Error)?) -> Void) throws
    -> Void
) -> Promise<Value> {
  Promise<Value>(on: queue) { fulfill, reject in
    try work { value, error in
      if let error { reject(error) } else { fulfill(value) }
    }
  }
}

/// Wraps an API whose completion handler takes an optional error and a value; the promise is
/// rejected with a non-`nil` error, else fulfilled with the value.
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work:
    @escaping @Sendable (_ handler: @escaping @Sendable ((any Error)?, Value) -> Void) throws
    -> Void
) -> Promise<Value> {
  Promise<Value>(on: queue) { fulfill, reject in
    try work { error, value in
      if let error { reject(error) } else { fulfill(value) }
    }
  }
}

/// Wraps an API whose completion handler takes an optional value and an optional error; the
/// promise is rejected with a non-`nil` error, else fulfilled with the value, `nil` included.
///
/// ```swift
/// wrap { handler in session.load(url, completion: handler) }   // (Data?, Error?) -> Void
/// ```
@_disfavoredOverload
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work:
    @escaping @Sendable (_ handler: @escaping @Sendable (Value?, (any Error)?) -> Void) throws
    -> Void
) -> Promise<Value?> {
  Promise<Value?>(on: queue) { fulfill, reject in
    try work { value, error in
      if let error { reject(error) } else { fulfill(value) }
    }
  }
}

/// Wraps an API whose completion handler takes an optional error and an optional value; the
/// promise is rejected with a non-`nil` error, else fulfilled with the value, `nil` included.
@_disfavoredOverload
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work:
    @escaping @Sendable (_ handler: @escaping @Sendable ((any Error)?, Value?) -> Void) throws
    -> Void
) -> Promise<Value?> {
  Promise<Value?>(on: queue) { fulfill, reject in
    try work { error, value in
      if let error { reject(error) } else { fulfill(value) }
    }
  }
}

/// Wraps an API whose completion handler takes two optional values and an optional error; the
/// promise is rejected with a non-`nil` error, else fulfilled with both values.
///
/// ```swift
/// wrap { handler in session.dataTask(url, completion: handler) }   // (Data?, Response?, Error?)
/// ```
@discardableResult
public func wrap<Value1, Value2>(
  on queue: DispatchQueue = .promises,
  _ work:
    @escaping @Sendable (
      _ handler: @escaping @Sendable (Value1?, Value2?, (any Error)?) -> Void
    ) throws -> Void
) -> Promise<(Value1?, Value2?)> {
  Promise<(Value1?, Value2?)>(on: queue) { fulfill, reject in
    try work { value1, value2, error in
      if let error { reject(error) } else { fulfill((value1, value2)) }
    }
  }
}

/// Wraps an API whose completion handler takes a `Result`; the promise is fulfilled with its
/// success value or rejected with its failure.
///
/// ```swift
/// wrap { handler in api.fetchUser(id, completion: handler) }   // (Result<User, Error>) -> Void
/// ```
@discardableResult
public func wrap<Value>(
  on queue: DispatchQueue = .promises,
  _ work:
    @escaping @Sendable (_ handler: @escaping @Sendable (Result<Value, any Error>) -> Void)
    throws -> Void
) -> Promise<Value> {
  Promise<Value>(on: queue) { fulfill, reject in
    try work { result in
      switch result {
      case .success(let value): fulfill(value)
      case .failure(let error): reject(error)
      }
    }
  }
}
