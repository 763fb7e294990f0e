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
  @inlinable
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
  @inlinable
  @discardableResult
  @preconcurrency
  public func then<Result>(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Result
  ) -> Promise<Result> {
    chainMap(on: queue, work)
  }

  /// Chains `work` to run on `queue` with the fulfilled value, for its side effects; the
  /// returned promise passes this promise's value on (or the error `work` throws).
  ///
  /// ```swift
  /// fetchUser(id).then { user in print(user.name) }.then { user in cache(user) }
  /// ```
  @inlinable
  @discardableResult
  @preconcurrency
  public func then(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Void
  ) -> Promise<Value> {
    chainPassingThrough(on: queue, work)
  }
}

/// The error a `then` block returned *as an error*: `value` when its static type `R` is an
/// error type (the `any Error` existential, possibly composed with marker protocols such as
/// `Sendable`, or a class conforming to `Error`), `nil` for any other type — in particular for a
/// value type that merely conforms to `Error`.
/// The error a `then` block returned, when its declared result type is an error type: the
/// `any Error` existential (or another existential whose value is an error), or a class type
/// conforming to `Error` such as `NSError`. A value type that merely conforms to `Error` (say,
/// after `extension String: Error {}`) is a value, not an error.
@inlinable
func returnedError<R>(_ value: R) -> (any Error)? {
  // Cheap checks first: this runs once per `then` block.
  if R.self == (any Error).self { return value as? any Error }
  if !(R.self is AnyClass), ObjectIdentifier(type(of: value as Any)) == ObjectIdentifier(R.self) {
    return nil  // a concrete value type: its values have exactly that type
  }
  // Class types and other existentials: only those whose type is itself an error type
  // (`NSError`, `any LocalizedError`); `Any` holding an error is still a value.
  guard R.self is any Error.Type else { return nil }
  return value as? any Error
}
