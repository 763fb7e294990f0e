extension CoFuture {
  /// Creates a pending future that runs `operation` in a new `Task` and completes with its
  /// result or error.
  ///
  /// ```swift
  /// let user = CoFuture<User>(operation: { try await client.user(id: 1) })
  /// DispatchQueue.main.startCoroutine { label.text = try user.await().name }
  /// ```
  ///
  /// Cancelling the future cancels the task (the operation sees `Task.isCancelled`); the
  /// future has then already failed with `CoFutureError.canceled`, whatever the operation
  /// returns. The running task keeps the future alive until the operation finishes.
  public convenience init(operation: @escaping @Sendable () async throws -> Value) {
    self.init()
    let task = Task { [self] in
      let result: Result<Value, any Error>
      do { result = .success(try await operation()) } catch { result = .failure(error) }
      resolve(result)
    }
    whenResolved { result in
      if result.isCoFutureCancellation { task.cancel() }
    }
  }
}
