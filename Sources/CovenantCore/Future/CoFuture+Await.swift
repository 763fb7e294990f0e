import Dispatch

extension CoFuture {
  /// Inside a coroutine: suspends it until the future completes, then returns the value or
  /// throws the error. Returns (or throws) at once when the future is already complete, even
  /// outside a coroutine.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let image = try downloadImage(url).await()   // the main thread keeps running meanwhile
  ///   imageView.image = image
  /// }
  /// ```
  /// - Throws: the future's error (`CoFutureError.canceled` if it was cancelled);
  ///   `CoroutineError.calledOutsideCoroutine` when it is pending and this is not a coroutine;
  ///   `CoroutineError.canceled` when the coroutine is cancelled while waiting.
  @inlinable
  public func await() throws -> Value {
    try cell.awaitValue(as: Value.self, awaiting: type(of: self))
  }

  /// Like `await()`, but gives up after `timeout`, throwing `CoFutureError.timeout`. The future
  /// itself is not cancelled and may still complete later. A negative timeout counts as zero.
  ///
  /// The timer is the coroutine's scheduler's (see `CoroutineScheduler.scheduleTask(after:_:)`)
  /// and is cancelled as soon as the future completes: a coroutine that is done waiting is not
  /// kept alive until the timeout would have expired.
  @inlinable
  public func await(timeout: DispatchTimeInterval) throws -> Value {
    try cell.awaitValue(as: Value.self, awaiting: type(of: self), timeout: timeout)
  }
}
