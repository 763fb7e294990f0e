/// Mutual exclusion for coroutines: waiting for the lock suspends the coroutine, never the
/// thread, so a critical section may itself `await`.
///
/// ```swift
/// let mutex = CoMutex()
/// var cache: [String: Data] = [:]
///
/// func data(for key: String) throws -> Data {      // called from coroutines
///   try mutex.withLock {
///     if let hit = cache[key] { return hit }
///     let fetched = try download(key).await()      // suspends with the lock held
///     cache[key] = fetched
///     return fetched
///   }
/// }
/// ```
///
/// - **Fair.** Coroutines waiting for the lock get it in the order they asked (FIFO). `unlock()`
///   hands the lock straight to the first of them, so a coroutine that comes along meanwhile
///   cannot take it first (no barging), and `tryLock()` fails while anyone waits.
/// - **Cancellation.** A coroutine cancelled while waiting throws `CoroutineError.canceled` and
///   never gets the lock. An uncontended `lock()` succeeds even in a cancelled coroutine (as
///   `await()` of a completed future returns its value there); only waiting throws.
/// - **Ownership.** The lock belongs to the coroutine that took it. Calling `unlock()` from any
///   other coroutine, or on a mutex nobody holds, is a programming error: it stops the program
///   with a precondition failure ("CoMutex.unlock(): …"). A coroutine that ends while holding the
///   lock leaves it locked for good (the mutex knows its holder by address, which a later
///   coroutine may then reuse, so that case is not always caught).
/// - **Outside coroutines**, the rule of `await()` applies: `lock()` takes a free mutex and
///   throws `CoroutineError.calledOutsideCoroutine` instead of waiting. Code outside coroutines
///   counts as one holder (the mutex does not tell threads apart).
/// - **Not reentrant.** A coroutine that locks a mutex it holds waits for itself forever.
///
/// Locking and unlocking a free mutex allocates nothing and costs one lock round trip each.
public final class CoMutex: Sendable {
  private let state = InlineMutex(PermitState(available: 1))

  /// Creates an unlocked mutex.
  public init() {}

  /// Takes the lock, suspending the calling coroutine until it is free.
  ///
  /// - Throws: `CoroutineError.canceled` if the coroutine is cancelled while waiting (it then
  ///   does not hold the lock); `CoroutineError.calledOutsideCoroutine` if the mutex is held and
  ///   the caller is not a coroutine.
  public func lock() throws {
    _ = try state.acquire(.mutex)
  }

  /// Takes the lock if it is free and nobody is waiting for it; never waits. Works inside and
  /// outside coroutines.
  /// - Returns: whether the caller now holds the lock.
  public func tryLock() -> Bool {
    let holder = PermitHolder.current
    return state.withCriticalSection { $0.take(for: holder) }
  }

  /// Releases the lock, handing it to the first waiting coroutine if there is one.
  ///
  /// - Precondition: the caller holds the lock (the same coroutine that locked it, or code
  ///   outside coroutines if it was locked there).
  public func unlock() {
    let holder = PermitHolder.current
    let (held, next) = state.withCriticalSection { state -> (Bool, CoroutineWaker?) in
      guard state.available == 0, state.holder == holder else { return (false, nil) }
      return (true, state.give())
    }
    // fatalError, not precondition: an optimized build drops a precondition's message.
    if !held { fatalError("CoMutex.unlock(): the mutex is not held by the caller") }
    next?.wake()
  }

  /// Runs `body` with the lock held: takes it (waiting if needed), runs `body`, and releases it
  /// however `body` ends. `body` may `await`.
  ///
  /// ```swift
  /// let count = try mutex.withLock { counter += 1; return counter }
  /// ```
  /// - Throws: what `body` throws, or what `lock()` throws (then `body` does not run).
  public func withLock<Result>(_ body: () throws -> Result) throws -> Result {
    try lock()
    defer { unlock() }
    return try body()
  }

  /// Whether some coroutine (or code outside coroutines) holds the lock right now. Only a
  /// snapshot; for tests and diagnostics.
  public var isLocked: Bool { state.withCriticalSection { $0.available == 0 } }
}
