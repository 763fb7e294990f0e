import Dispatch

extension Promise {
  /// Inside a coroutine: suspends it until the promise resolves, then returns the value or
  /// throws the error; returns at once when already resolved.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let user = try fetchUser(id).await()
  /// }
  /// ```
  /// - Throws: the rejection error; `CoroutineError.calledOutsideCoroutine` outside a
  ///   coroutine; `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  @inlinable public func await() throws -> Value {
    try cell.awaitValue(as: Value.self)
  }

  /// Like `await()`, but throws `CoFutureError.timeout` if the promise has not resolved within
  /// `timeout` (the promise itself is left alone).
  public func await(timeout: DispatchTimeInterval) throws -> Value {
    if let result { return try result.get() }
    let coroutine = try CoroutineContext.requireCurrent()
    try coroutine.suspendUntil(timeout: timeout) { waker in whenResolved { _ in waker.resume() } }
    return try result!.get()
  }
}
