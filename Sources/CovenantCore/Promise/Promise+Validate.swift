import Dispatch

extension Promise {
  /// Chains `predicate` to run on `queue` with the fulfilled value; the returned promise passes
  /// the value on if `predicate` returns `true`, and is rejected with
  /// `PromiseError.validationFailure` if it returns `false`. A rejection is passed on.
  ///
  /// ```swift
  /// fetchUser(id).validate { $0.isActive }.then { greet($0) }
  /// ```
  @discardableResult
  public func validate(
    on queue: DispatchQueue = .promises,
    _ predicate: @escaping @Sendable (Value) -> Bool
  ) -> Promise<Value> {
    chain(on: queue) { outcome in
      let value = try outcome.get()
      return predicate(value) ? .fulfill(value) : .reject(PromiseError.validationFailure)
    }
  }
}
