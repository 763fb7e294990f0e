import CCoroutineContext
import Dispatch

/// Operations on the current coroutine, SwiftCoroutine-style.
///
/// Every `await` suspends the calling coroutine — its thread goes on with other work — until
/// the callback is called; then the coroutine continues on its scheduler. Outside a coroutine
/// they throw `CoroutineError.calledOutsideCoroutine`; in a cancelled coroutine they throw
/// `CoroutineError.canceled`.
///
/// ```swift
/// DispatchQueue.main.startCoroutine {
///   let data: Data? = try Coroutine.await { callback in
///     URLSession.shared.dataTask(with: url) { data, _, _ in callback(data) }.resume()
///   }
/// }
/// ```
///
/// A callback called more than once is honoured only the first time; a callback called
/// synchronously, before the coroutine has suspended, works.
public struct Coroutine {
  /// Whether the calling code runs inside a coroutine.
  public static var isInsideCoroutine: Bool { CoroutineContext.current != nil }

  /// Whether the current coroutine has been cancelled (`false` outside a coroutine).
  public static var isCanceled: Bool { CoroutineContext.current?.isCanceled ?? false }

  /// The usable stack size, in bytes, of coroutines started without an explicit size
  /// (initially 262,144 = 256 KiB; set values are rounded up to whole pages, at least 16 KiB).
  public static var defaultStackSize: Int {
    get { Int(cov_stack_default_size()) }
    set { cov_stack_set_default_size(max(0, newValue)) }
  }

  /// How many released default-size stacks are kept for reuse (initially 64).
  public static var stackPoolCapacity: Int {
    get { Int(cov_stack_pool_capacity()) }
    set { cov_stack_set_pool_capacity(max(0, newValue)) }
  }

  /// Suspends until `callback`'s completion is called.
  public static func await(_ callback: (@escaping @Sendable () -> Void) -> Void) throws {
    try suspend { (resume: @escaping @Sendable (()) -> Void) in callback { resume(()) } }
  }

  /// Suspends until `callback`'s completion is called, and returns what it was called with.
  public static func await<T>(_ callback: (@escaping @Sendable (T) -> Void) -> Void) throws -> T {
    try suspend(callback)
  }

  /// Suspends until `callback`'s completion is called, and returns its two arguments.
  public static func await<T, N>(
    _ callback: (@escaping @Sendable (T, N) -> Void) -> Void
  ) throws -> (T, N) {
    try suspend { (resume: @escaping @Sendable ((T, N)) -> Void) in callback { resume(($0, $1)) } }
  }

  /// Suspends until `callback`'s completion is called, and returns its three arguments.
  public static func await<T, N, M>(
    _ callback: (@escaping @Sendable (T, N, M) -> Void) -> Void
  ) throws -> (T, N, M) {
    try suspend { (resume: @escaping @Sendable ((T, N, M)) -> Void) in
      callback { resume(($0, $1, $2)) }
    }
  }

  /// Suspends the current coroutine for `time` (negative: not at all, but still a suspension
  /// point for cancellation).
  ///
  /// The timer is the coroutine's scheduler's (`CoroutineScheduler.scheduleTask(after:_:)`), so
  /// on CovenantTesting's `TestScheduler` a delay takes virtual time. Cancelling the coroutine
  /// ends the delay at once (it throws `CoroutineError.canceled`) and cancels the timer.
  public static func delay(_ time: DispatchTimeInterval) throws {
    try CoroutineContext.requireCurrent().sleep(for: time)
  }

  /// Lets other tasks queued on the coroutine's scheduler run, then continues.
  public static func yield() throws {
    try CoroutineContext.requireCurrent().yield()
  }

  /// The one suspension path for callback-style awaits.
  ///
  /// The callback holds a `CallbackAwait`, and only that: if the callback is released without
  /// having been called, nothing can resume the coroutine any more, and coroutine snapshots
  /// report it as leaked.
  static func suspend<T>(_ callback: (@escaping @Sendable (T) -> Void) -> Void) throws -> T {
    let coroutine = try CoroutineContext.requireCurrent()
    var pending: Unmanaged<CallbackAwait<T>>?
    try coroutine.suspend(.callback, detail: metadataBits(T.self)) { waker in
      let callbackAwait = CallbackAwait<T>(waker)
      pending = Unmanaged.passUnretained(callbackAwait)
      callback { value in callbackAwait.deliver(value) }
    }
    // Not cancelled: a delivery won, and left the coroutine a reference to its `CallbackAwait`.
    return CallbackAwait.takeValue(pending.unsafelyUnwrapped)
  }
}
