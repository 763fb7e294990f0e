import Dispatch

extension Promise {
  /// Chains `work` to run on `queue` with the fulfilled value; the returned promise adopts the
  /// outcome of the promise `work` returns.
  ///
  /// A rejection skips `work` and is passed on; a throw from `work` rejects.
  ///
  /// ```swift
  /// fetchUser(id).then { user in fetchAvatar(for: user) }   // Promise<Avatar>
  /// ```
  @discardableResult
  @preconcurrency
  public func then<Result>(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Promise<Result>
  ) -> Promise<Result> {
    chain(on: queue) { outcome in .adopt(try work(try outcome.get())) }
  }

  /// Chains `work` to run on `queue` with the fulfilled value; the returned promise is fulfilled
  /// with what `work` returns.
  ///
  /// A rejection skips `work` and is passed on; a throw from `work` rejects. When the declared
  /// result type is an error type — `any Error` (`{ _ -> Error in … }`), or a class conforming to
  /// `Error` such as `NSError` — the returned error **rejects** the promise, as in
  /// google/promises. A value type that merely conforms to `Error` (say, `String` after
  /// `extension String: Error {}`) is an ordinary value when it is the declared result type.
  ///
  /// ```swift
  /// Promise(1).then { $0 + 1 }.then { print($0) }   // prints 2
  /// ```
  @discardableResult
  @preconcurrency
  public func then<Result>(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Result
  ) -> Promise<Result> {
    chain(on: queue) { outcome in
      let result = try work(try outcome.get())
      if let error = returnedError(result) { return .reject(error) }
      return .fulfill(result)
    }
  }

  /// Chains `work` to run on `queue` with the fulfilled value, for its side effects; the
  /// returned promise passes this promise's value on (or the error `work` throws).
  ///
  /// ```swift
  /// fetchUser(id).then { user in print(user.name) }.then { user in cache(user) }
  /// ```
  @discardableResult
  @preconcurrency
  public func then(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Void
  ) -> Promise<Value> {
    chain(on: queue) { outcome in
      let value = try outcome.get()
      try work(value)
      return .fulfill(value)
    }
  }
}

/// The error a `then` block returned *as an error*: `value` when its static type `R` is an
/// error type (the `any Error` existential, possibly composed with marker protocols such as
/// `Sendable`, or a class conforming to `Error`), `nil` for any other type — in particular for a
/// value type that merely conforms to `Error`.
func returnedError<R>(_ value: R) -> (any Error)? {
  guard R.self is any Error.Type, let error = value as? any Error else { return nil }
  if R.self is AnyClass { return error }  // NSError and its subclasses, Swift error classes
  // A concrete value type's values have exactly that type; an existential's do not.
  let dynamicType: Any.Type = type(of: value as Any)
  return ObjectIdentifier(dynamicType) == ObjectIdentifier(R.self) ? nil : error
}
