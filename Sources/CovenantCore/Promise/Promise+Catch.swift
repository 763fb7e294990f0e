import Dispatch

extension Promise {
  /// Chains `reject` to run on `queue` with the error if this promise is rejected; the returned
  /// promise passes this promise's outcome on unchanged, whichever it is.
  ///
  /// ```swift
  /// fetchUser(id).then { show($0) }.catch { error in log(error) }
  /// ```
  @discardableResult
  public func `catch`(
    on queue: DispatchQueue = .promises,
    _ reject: @escaping @Sendable (any Error) -> Void
  ) -> Promise<Value> {
    chain(on: queue) { outcome in
      if case .failure(let error) = outcome { reject(error) }
      return .fulfill(try outcome.get())
    }
  }
}
