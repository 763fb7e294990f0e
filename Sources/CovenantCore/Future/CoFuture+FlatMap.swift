extension CoFuture {
  /// A future that adopts the outcome of the future `callback` returns for this one's outcome.
  ///
  /// `callback` runs synchronously on the completing thread (at once if this future is already
  /// complete). Cancelling the returned future cancels this one and the future `callback`
  /// returned.
  @inlinable
  public func flatMapResult<NewValue>(
    _ callback: @escaping @Sendable (Result<Value, any Error>) -> CoFuture<NewValue>
  ) -> CoFuture<NewValue> {
    if let result = cell.result(as: Value.self) { return callback(result) }
    let derived = CoFuture<NewValue>()
    whenResolved { result in
      guard derived.cell.isPending else { return }
      let inner = callback(result)
      guard inner !== derived else { return }
      inner.whenResolved { derived.resolve($0) }
      derived.whenResolved { [weak inner] result in
        if result.isCoFutureCancellation { inner?.cancel() }
      }
    }
    derived.cancelsParent(self)
    return derived
  }

  /// A future that adopts the outcome of the future `callback` returns for this one's value;
  /// errors pass through.
  ///
  /// ```swift
  /// let posts = fetchUser(id).flatMap { user in fetchPosts(of: user) }
  /// ```
  @inlinable
  public func flatMap<NewValue>(
    _ callback: @escaping @Sendable (Value) -> CoFuture<NewValue>
  ) -> CoFuture<NewValue> {
    flatMapResult { result in
      switch result {
      case .success(let value): return callback(value)
      case .failure(let error): return CoFuture<NewValue>(result: .failure(error))
      }
    }
  }

  /// A future that replaces this one's error (cancellation included) with the outcome of the
  /// future `callback` returns; values pass through.
  @inlinable
  public func flatMapError(
    _ callback: @escaping @Sendable (any Error) -> CoFuture<Value>
  ) -> CoFuture<Value> {
    flatMapResult { result in
      switch result {
      case .success: return CoFuture(result: result)
      case .failure(let error): return callback(error)
      }
    }
  }
}
