extension Promise {
  /// Creates a pending promise that runs `operation` in a new `Task` and is fulfilled with its
  /// result, or rejected with the error it throws: Swift `async` code for promise-based APIs.
  ///
  /// ```swift
  /// func fetchUser(id: Int) -> Promise<User> {
  ///   Promise(operation: { try await client.user(id: id) })
  /// }
  /// ```
  ///
  /// The task is not cancelled by anything in Covenant; the promise keeps itself (and the
  /// task) alive until the operation finishes.
  public convenience init(operation: @escaping @Sendable () async throws -> Value) {
    self.init()
    Task { [self] in
      do {
        fulfill(try await operation())
      } catch {
        reject(error)
      }
    }
  }
}
