import Dispatch

extension Promise {
  /// Returns a promise fulfilled with this promise's value `interval` seconds after this one is
  /// fulfilled, on `queue`. A rejection is passed on at once, without waiting. A negative
  /// interval is treated as 0.
  ///
  /// ```swift
  /// showBanner().delay(2).then { _ in hideBanner() }
  /// ```
  @discardableResult
  public func delay(on queue: DispatchQueue = .promises, _ interval: TimeInterval) -> Promise<Value>
  {
    let delayed = Promise<Value>()
    whenResolved { outcome in
      switch outcome {
      case .success(let value):
        PromiseDispatch.asyncAfter(interval, on: queue) { delayed.fulfill(value) }
      case .failure(let error):
        delayed.reject(error)
      }
    }
    return delayed
  }
}
