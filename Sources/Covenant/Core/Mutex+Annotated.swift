import CCoroutineContext
import Synchronization

extension Mutex where Value: Sendable {
  /// `withLock`, bracketed with `cov_sync_acquire`/`cov_sync_release` so that ThreadSanitizer
  /// sees the lock hand-over. Every lock in Covenant goes through here.
  ///
  /// Why the annotations: on Linux a contended `Mutex` is handed over by the kernel (a
  /// priority-inheritance futex in the uninstrumented runtime), invisible to TSan, which then
  /// reports the protected accesses as races. In ordinary builds they are one branch each.
  ///
  /// Why `@inline(never)` (callers still specialize it): on Linux a `Mutex` records its owner's
  /// thread id, read through a runtime call the optimizer treats as pure. Inlined into a
  /// function that also suspends a coroutine — `awaitReceive`, `awaitSend`, `await` — the id
  /// read before the suspension would be reused after the coroutine resumed on another thread,
  /// and the mutex would believe the wrong thread owns it ("Recursive call to lock Mutex",
  /// "unlock … on a thread which hasn't acquired the lock"). Kept out of line, every critical
  /// section reads the id of the thread it actually runs on.
  @inlinable @inline(never)
  func withCriticalSection<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try withLock { value in
      try withUnsafeMutablePointer(to: &value) { pointer in
        cov_sync_acquire(pointer)
        defer { cov_sync_release(pointer) }
        return UncheckedSendable(try body(&pointer.pointee))
      }
    }.value
  }
}
