import Dispatch

/// A counting semaphore for coroutines: waiting for a permit suspends the coroutine, never the
/// thread. Use it to bound how many coroutines do something at once (connections, requests in
/// flight).
///
/// ```swift
/// let slots = CoSemaphore(value: 4)                // at most four downloads at a time
///
/// for url in urls {
///   DispatchQueue.global().startCoroutine {
///     let data = try slots.withPermit { try download(url).await() }
///     save(data)
///   }
/// }
/// ```
///
/// - **Fair.** Waiting coroutines get permits in the order they asked (FIFO); `signal()` hands
///   its permit straight to the first of them, so none is overtaken by a newcomer.
/// - **Exact.** A cancelled or timed-out wait takes no permit, and a permit handed to a waiter
///   is never lost or given twice: whichever of `signal()`, the timeout or a cancel claims the
///   waiting coroutine first decides.
/// - **Outside coroutines**, the rule of `await()` applies: `wait()` takes a free permit and
///   throws `CoroutineError.calledOutsideCoroutine` instead of waiting. `signal()` works
///   anywhere.
///
/// Unlike `CoMutex`, permits have no owner: any code may signal.
public final class CoSemaphore: Sendable {
  private let state: InlineMutex<PermitState>

  /// Creates a semaphore with `value` free permits.
  /// - Precondition: `value >= 0`.
  public init(value: Int) {
    // fatalError, not precondition: an optimized build drops a precondition's message.
    if value < 0 { fatalError("CoSemaphore(value:) needs a value of 0 or more, not \(value)") }
    state = InlineMutex(PermitState(available: value))
  }

  /// Takes a permit, suspending the calling coroutine until one is free.
  ///
  /// - Throws: `CoroutineError.canceled` if the coroutine is cancelled while waiting (no permit
  ///   is taken); `CoroutineError.calledOutsideCoroutine` if no permit is free and the caller is
  ///   not a coroutine.
  public func wait() throws {
    _ = try state.acquire(.semaphore)
  }

  /// Takes a permit, suspending the calling coroutine for at most `timeout`.
  ///
  /// The timer is the coroutine's scheduler's (`CoroutineScheduler.scheduleTask(after:_:)`), and
  /// is cancelled as soon as a permit arrives. A negative timeout counts as zero.
  /// - Throws: `CoFutureError.timeout` if no permit came in time (none is taken), as every
  ///   timed wait in Covenant; otherwise as `wait()`.
  public func wait(timeout: DispatchTimeInterval) throws {
    if try !state.acquire(.semaphore, timeout: timeout) { throw CoFutureError.timeout }
  }

  /// Takes a permit if one is free and nobody is waiting; never waits.
  /// - Returns: whether a permit was taken.
  public func tryWait() -> Bool {
    state.withCriticalSection { $0.take(for: 0) }
  }

  /// Returns a permit: hands it to the first waiting coroutine, or adds it to the free ones.
  public func signal() {
    state.release()
  }

  /// Runs `body` holding a permit: takes one (waiting if needed), runs `body`, and returns the
  /// permit however `body` ends. `body` may `await`.
  /// - Throws: what `body` throws, or what `wait()` throws (then `body` does not run).
  public func withPermit<Result>(_ body: () throws -> Result) throws -> Result {
    try wait()
    defer { signal() }
    return try body()
  }

  /// The number of free permits right now (0 while coroutines wait). Only a snapshot; for
  /// tests and diagnostics.
  public var availablePermits: Int { state.withCriticalSection { $0.available } }

  /// How many coroutines wait for a permit right now. For tests.
  package var waiterCount: Int { state.withCriticalSection { $0.waiterCount } }
}
