import Dispatch

extension Promise {
  /// Chains `recovery` to run on `queue` with the error if this promise is rejected; the
  /// returned promise adopts the outcome of the promise `recovery` returns. A fulfilment is
  /// passed on unchanged; a throw from `recovery` rejects.
  ///
  /// ```swift
  /// fetchAvatar(for: user).recover { _ in fetchDefaultAvatar() }
  /// ```
  @discardableResult
  public func recover(
    on queue: DispatchQueue = .promises,
    _ recovery: @escaping @Sendable (any Error) throws -> Promise<Value>
  ) -> Promise<Value> {
    chain(on: queue) { outcome in
      switch outcome {
      case .success(let value): return .fulfill(value)
      case .failure(let error): return .adopt(try recovery(error))
      }
    }
  }

  /// Chains `recovery` to run on `queue` with the error if this promise is rejected; the
  /// returned promise is fulfilled with what `recovery` returns. A fulfilment is passed on
  /// unchanged; a throw from `recovery` rejects.
  ///
  /// ```swift
  /// fetchAvatar(for: user).recover { _ in Avatar.placeholder }
  /// ```
  @discardableResult
  public func recover(
    on queue: DispatchQueue = .promises,
    _ recovery: @escaping @Sendable (any Error) throws -> Value
  ) -> Promise<Value> {
    chain(on: queue) { outcome in
      switch outcome {
      case .success(let value): return .fulfill(value)
      case .failure(let error): return .fulfill(try recovery(error))
      }
    }
  }
}
