extension CoFuture {
  /// Creates a future that has already succeeded with `value` (SwiftCoroutine's
  /// `CoFuture(value:)`).
  ///
  /// ```swift
  /// let cached = CoFuture(value: image)
  /// ```
  ///
  /// Disfavored so that `CoFuture { … }` (a trailing closure) means `init(task:)`, not a future
  /// of a closure.
  @_disfavoredOverload
  @inlinable
  public convenience init(value: Value) {
    self.init(result: .success(value))
  }

  /// Creates a future that has already failed with `error` (SwiftCoroutine's
  /// `CoFuture(error:)`).
  ///
  /// ```swift
  /// let refused = CoFuture<Data>(error: URLError(.notConnectedToInternet))
  /// ```
  @inlinable
  public convenience init(error: any Error) {
    self.init(result: .failure(error))
  }
}
