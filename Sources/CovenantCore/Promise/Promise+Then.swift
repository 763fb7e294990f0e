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
  public func then<Result>(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Promise<Result>
  ) -> Promise<Result> {
    chain(on: queue) { outcome in .adopt(try work(try outcome.get())) }
  }

  /// Chains `work` to run on `queue` with the fulfilled value; the returned promise is fulfilled
  /// with what `work` returns.
  ///
  /// A rejection skips `work` and is passed on; a throw from `work` rejects. A returned
  /// *error* **rejects** the promise, as in google/promises: a value of a type declared as an
  /// error (`return MyError.failed`, an `NSError`), or any value when the result type is
  /// `any Error`. Standard value types given a retroactive `Error` conformance (say, `String`
  /// after `extension String: Error {}`) stay ordinary values.
  ///
  /// ```swift
  /// Promise(1).then { $0 + 1 }.then { print($0) }   // prints 2
  /// ```
  @inlinable
  @discardableResult
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
  public func then(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable (Value) throws -> Void
  ) -> Promise<Value> {
    chainPassingThrough(on: queue, work)
  }
}
