/// Something that can be cancelled and tells when it is complete: coroutines, futures,
/// channels and scopes themselves.
public protocol CoCancellable: AnyObject {
  /// Cancels the work. Idempotent.
  func cancel()
  /// Whether `cancel()` has been called (or the work was cancelled another way).
  var isCanceled: Bool { get }
  /// Registers `callback` to run once when the work completes (finishes or is cancelled); at
  /// once if it already has.
  func whenComplete(_ callback: @escaping () -> Void)
}

extension CoCancellable {
  /// Adds this item to `scope`, so cancelling the scope cancels it, and returns it.
  ///
  /// ```swift
  /// let future = api.load().added(to: scope)
  /// ```
  @discardableResult
  public func added(to scope: CoScope) -> Self {
    scope.add(self)
    return self
  }
}
