import Dispatch

extension Promise {
  /// Creates a pending promise and runs `work` asynchronously on `queue`, handing it `fulfill`
  /// and `reject` callbacks; a throw from `work` rejects the promise.
  ///
  /// The promise keeps itself alive until it is resolved, so `work` may store the callbacks
  /// and resolve later, e.g. from a completion handler.
  ///
  /// ```swift
  /// let data = Promise<Data>(on: .global()) { fulfill, reject in
  ///   session.load(url) { data, error in error.map(reject) ?? fulfill(data!) }
  /// }
  /// ```
  public convenience init(
    on queue: DispatchQueue = .promises,
    _ work:
      @escaping @Sendable (
        _ fulfill: @escaping @Sendable (Value) -> Void,
        _ reject: @escaping @Sendable (any Error) -> Void
      ) throws -> Void
  ) {
    self.init()
    retainUntilResolved()
    PromiseDispatch.async(on: queue) { [self] in
      do {
        try work({ self.fulfill($0) }, { self.reject($0) })
      } catch {
        reject(error)
      }
    }
  }
}
