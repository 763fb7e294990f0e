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
    try cell.awaitValue(as: Value.self, awaiting: type(of: self))
  }

  /// Like `await()`, but throws `CoFutureError.timeout` if the promise has not resolved within
  /// `timeout` (the promise itself is left alone). A negative timeout counts as zero.
  ///
  /// The timer is the coroutine's scheduler's and is cancelled as soon as the promise
  /// resolves, so a coroutine that is done waiting is freed at once.
  @inlinable public func await(timeout: DispatchTimeInterval) throws -> Value {
    try cell.awaitValue(as: Value.self, awaiting: type(of: self), timeout: timeout)
  }
}
