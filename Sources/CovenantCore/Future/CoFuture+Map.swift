extension CoFuture {
  /// A future completed with `transform` of this one's outcome.
  ///
  /// The transform runs synchronously on the completing thread (at once if this future is
  /// already complete). Cancelling the returned future cancels this one.
  @inlinable
  public func mapResult<NewValue>(
    _ transform: @escaping @Sendable (Result<Value, any Error>) -> Result<NewValue, any Error>
  ) -> CoFuture<NewValue> {
    if let result = cell.result(as: Value.self) {
      return CoFuture<NewValue>(result: transform(result))
    }
    let derived = CoFuture<NewValue>()
    whenResolved { result in
      // A derived future cancelled meanwhile does not need (or want) the transform.
      guard derived.cell.isPending else { return }
      derived.resolve(transform(result))
    }
    derived.cancelsParent(self)
    return derived
  }

  /// A future with `transform` of this one's value; errors pass through, and an error thrown by
  /// `transform` fails the new future.
  ///
  /// ```swift
  /// let name = fetchUser(id).map { $0.name }
  /// ```
  @inlinable
  public func map<NewValue>(
    _ transform: @escaping @Sendable (Value) throws -> NewValue
  ) -> CoFuture<NewValue> {
    mapResult { result in Result { try transform(result.get()) } }
  }

  /// A future that replaces this one's error (cancellation included) with `transform`'s value;
  /// an error thrown by `transform` fails the new future. Values pass through.
  ///
  /// ```swift
  /// let avatar = loadAvatar(user).recover { _ in .placeholder }
  /// ```
  @inlinable
  public func recover(
    _ transform: @escaping @Sendable (any Error) throws -> Value
  ) -> CoFuture<Value> {
    mapResult { result in result.flatMapError { error in Result { try transform(error) } } }
  }
}
