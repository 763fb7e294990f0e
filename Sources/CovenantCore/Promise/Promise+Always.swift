import Dispatch

extension Promise {
  /// Chains `work` to run on `queue` once this promise is resolved, fulfilled or rejected; the
  /// returned promise passes the outcome on unchanged.
  ///
  /// ```swift
  /// spinner.start()
  /// fetchUser(id).then { show($0) }.always { spinner.stop() }
  /// ```
  @discardableResult
  public func always(
    on queue: DispatchQueue = .promises,
    _ work: @escaping @Sendable () -> Void
  ) -> Promise<Value> {
    chain(on: queue) { outcome in
      work()
      return .fulfill(try outcome.get())
    }
  }
}
