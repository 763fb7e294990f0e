extension CoFuture {
  /// Calls `callback` with the outcome when the future completes, synchronously on the
  /// completing thread (at once, on this thread, if it is already complete).
  @inlinable
  public func whenComplete(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    whenResolved(callback)
  }

  /// Calls `callback` with the value if the future succeeds (synchronously, on the completing
  /// thread).
  @inlinable
  public func whenSuccess(_ callback: @escaping @Sendable (Value) -> Void) {
    whenResolved { if case .success(let value) = $0 { callback(value) } }
  }

  /// Calls `callback` with the error if the future fails, cancellation included
  /// (synchronously, on the completing thread).
  @inlinable
  public func whenFailure(_ callback: @escaping @Sendable (any Error) -> Void) {
    whenResolved { if case .failure(let error) = $0 { callback(error) } }
  }

  /// Calls `callback` if the future is cancelled (it fails with `CoFutureError.canceled`),
  /// synchronously on the cancelling thread.
  @inlinable
  public func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
    whenResolved { if $0.isCoFutureCancellation { callback() } }
  }
}

extension CoFuture: CoCancellable {
  /// Calls `callback` when the future completes in any way (the `CoCancellable` form, which is
  /// what lets a `CoScope` drop completed futures).
  @inlinable public func whenComplete(_ callback: @escaping () -> Void) {
    whenResolved { _ in callback() }
  }
}
