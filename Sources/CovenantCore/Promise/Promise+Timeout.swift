import Dispatch

extension Promise {
  /// Returns a promise that mirrors this one, or is rejected with `PromiseError.timedOut` if
  /// this one has not resolved within `interval` seconds (negative: 0). This promise itself is
  /// not cancelled and may still resolve later; that no longer affects the returned promise.
  ///
  /// The returned promise keeps itself alive until it is resolved (at the latest when the
  /// interval ends), and the timer does not hold up `waitForPromises(timeout:)` once it is.
  ///
  /// ```swift
  /// fetchUser(id).timeout(5).catch { error in
  ///   if error as? PromiseError == .timedOut { showOfflineBanner() }
  /// }
  /// ```
  @discardableResult
  public func timeout(on queue: DispatchQueue = .promises, _ interval: TimeInterval) -> Promise<
    Value
  > {
    let mirror = chain(on: queue) { outcome in .fulfill(try outcome.get()) }
    mirror.retainUntilResolved()
    PromiseDispatch.asyncAfter(interval, on: queue, grouped: false) { [weak mirror] in
      mirror?.reject(PromiseError.timedOut)
    }
    return mirror
  }
}
