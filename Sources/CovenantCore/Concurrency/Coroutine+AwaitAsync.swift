extension Coroutine {
  /// Inside a coroutine: runs the `async` `operation` in a new `Task` and suspends the
  /// coroutine (not its thread) until it finishes; returns its result or rethrows its error.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let user = try Coroutine.awaitAsync { try await client.user(id: 1) }
  ///   label.text = user.name      // back on the main queue
  /// }
  /// ```
  ///
  /// The coroutine continues on its scheduler afterwards. If the coroutine is cancelled while
  /// it waits, the wait throws `CoroutineError.canceled` at once and the task is cancelled.
  /// The callback form works as well, without this helper:
  /// `try Coroutine.await { callback in Task { callback(await work()) } }`.
  ///
  /// - Throws: the operation's error; `CoroutineError.calledOutsideCoroutine` outside a
  ///   coroutine; `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  public static func awaitAsync<T>(
    _ operation: @escaping @Sendable () async throws -> T
  ) throws -> T {
    let coroutine = try CoroutineContext.requireCurrent()
    let slot = ResumeSlot<UncheckedSendable<Result<T, any Error>>>()
    var task: Task<Void, Never>?
    do {
      try coroutine.suspend(.asyncBridge, detail: metadataBits(T.self)) { waker in
        task = Task {
          let result: Result<T, any Error>
          do { result = .success(try await operation()) } catch { result = .failure(error) }
          guard waker.claim() else { return }
          slot.value = UncheckedSendable(result)
          waker.wake()
        }
      }
    } catch {
      task?.cancel()
      throw error
    }
    return try slot.value!.value.get()
  }

  /// `awaitAsync(_:)` spelled as an `await`: runs the `async` `operation` in a `Task` and
  /// suspends the coroutine until it finishes.
  ///
  /// ```swift
  /// let user = try Coroutine.await { try await client.user(id: 1) }
  /// ```
  ///
  /// A closure without parameters selects this form; one that takes a callback selects the
  /// callback forms above.
  public static func await<T>(
    _ operation: @escaping @Sendable () async throws -> T
  ) throws -> T {
    try awaitAsync(operation)
  }
}
