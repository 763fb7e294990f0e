import CCoroutineContext
import Synchronization

extension Mutex where Value: Sendable {
  /// `withLock`, made visible to ThreadSanitizer. Every lock in Covenant goes through here.
  ///
  /// Why: on Linux a contended `Mutex` is handed over by the kernel (a priority-inheritance
  /// futex inside the uninstrumented runtime), so TSan never sees that acquire/release. In
  /// TSan builds the critical section therefore starts with `cov_sync_acquire` and ends with
  /// `cov_sync_release` on the mutex's own address. The acquire must come before the first
  /// access to the protected value: TSan instruments an `inout` access where it begins
  /// (`&value`), so the annotation is made on the mutex's address, known before `value` is
  /// touched, rather than on the value's address (which would need `&value` first, and a
  /// report on every contended hand-over, plus the cost of producing it while others wait).
  /// Ordinary builds take the first branch: plain `withLock`, nothing else.
  ///
  /// Why `@inline(never)` (callers still specialize it): on Linux a `Mutex` records its owner's
  /// thread id, read through a runtime call the optimizer treats as pure. Inlined into a
  /// function that also suspends a coroutine — `awaitReceive`, `awaitSend`, `await` — the id
  /// read before the suspension would be reused after the coroutine resumed on another thread,
  /// and the mutex would believe the wrong thread owns it ("Recursive call to lock Mutex",
  /// "unlock … on a thread which hasn't acquired the lock"). Kept out of line, every critical
  /// section reads the id of the thread it actually runs on.
  @inlinable @inline(never)
  package func withCriticalSection<Result>(
    _ body: (inout Value) throws -> Result
  ) rethrows -> Result {
    if _fastPath(cov_sync_annotations_enabled == 0) {
      return try withLock { value in UncheckedSendable(try body(&value)) }.value
    }
    return try withUnsafePointer(to: self) { mutex in
      try withLock { value in
        cov_sync_acquire_slow(mutex)  // before `&value`: see above
        defer { cov_sync_release_slow(mutex) }
        return UncheckedSendable(try body(&value))
      }.value
    }
  }
}
