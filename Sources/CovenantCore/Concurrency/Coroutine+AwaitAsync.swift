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
  ///
  /// **Where the task runs.** The task prefers the coroutine's scheduler as its executor when
  /// the scheduler can serve as one (``TaskExecutorScheduler``: a `DispatchQueue`, CovenantNIO's
  /// event loops): async code that does not hop to an actor runs where the coroutine runs, so a
  /// call from a coroutine on an event loop costs no thread hop. Elsewhere (other schedulers, and
  /// platforms before task executors) it runs on the global concurrent executor.
  ///
  /// **Task-locals.** The task inherits the coroutine's bindings of bridged coroutine-locals
  /// (``CoroutineLocal/init(bridging:)``), such as a tracing `ServiceContext`.
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
        let body: @Sendable () async -> Void = {
          let result: Result<T, any Error>
          do { result = .success(try await operation()) } catch { result = .failure(error) }
          guard waker.claim() else { return }
          slot.value = UncheckedSendable(result)
          waker.wake()
        }
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
          let executor = coroutine.preferredTaskExecutor
        {
          // The task keeps its executor alive: toolchains before 6.1 only record it unowned.
          task = Task(executorPreference: executor) {
            await body()
            withExtendedLifetime(executor) {}
          }
        } else {
          task = Task(operation: body)
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
