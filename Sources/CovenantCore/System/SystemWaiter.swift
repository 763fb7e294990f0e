import Dispatch

/// Who waits for a piece of system work (a pool closure, a readable pipe, a child's exit): a
/// suspended coroutine's waker, or a thread blocked outside coroutines. Resumed at most once
/// in effect: a coroutine waker's claim refuses every call after the first (and a stale one,
/// from an await a cancel already ended); a thread's semaphore belongs to one wait.
///
/// An enum rather than a callback closure: handing a coroutine's waker to the pool or the
/// watcher allocates nothing.
enum SystemWaiter: @unchecked Sendable {
  case coroutine(CoroutineWaker)
  case thread(DispatchSemaphore)

  /// Lets the waiter go on (any thread).
  func resume() {
    switch self {
    case .coroutine(let waker): waker.resume()
    case .thread(let semaphore): semaphore.signal()
    }
  }

  /// Waits until the waiter handed to `register` is resumed: suspends the current coroutine
  /// (what snapshots call a `kind` wait, with `detail`), or outside coroutines blocks the
  /// calling thread, as every blocking-style await of the system layer does.
  ///
  /// `register` publishes the waiter (it may resume it at once). A coroutine cancelled first
  /// calls `withdraw` (which takes the waiter back if it can) and throws.
  /// - Throws: `CoroutineError.canceled` (only in a coroutine).
  static func wait(
    _ kind: CoroutineWaitKind = .callback, detail: UInt = 0,
    register: (SystemWaiter) -> Void, withdraw: () -> Void
  ) throws(CoroutineError) {
    if let coroutine = CoroutineContext.current {
      do throws(CoroutineError) {
        try coroutine.suspend(kind, detail: detail) { register(.coroutine($0)) }
      } catch {
        withdraw()
        throw error
      }
    } else {
      let semaphore = DispatchSemaphore(value: 0)
      register(.thread(semaphore))
      ResolutionDrain.tellQueuedBeforeWaiting()  // what it told may be what resumes it
      semaphore.wait()
    }
  }
}

/// A value that a party resuming a `SystemWaiter` leaves for it: written before `resume()`,
/// read by the waiter after its wait returned.
///
/// `@unchecked Sendable`: the resume (a waker's claim and wake, or a semaphore signal) orders
/// the write before the read; nothing else touches it.
final class WaiterSlot<Value>: @unchecked Sendable {
  var value: Value

  init(_ value: Value) { self.value = value }
}
