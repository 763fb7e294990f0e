import CCoroutineContext
import Synchronization

extension Mutex where Value: Sendable {
  /// `withLock`, bracketed with `cov_sync_acquire`/`cov_sync_release` so that ThreadSanitizer
  /// sees the lock hand-over. Every lock in Covenant goes through here.
  ///
  /// Why: on Linux a contended `Mutex` is handed over by the kernel (a priority-inheritance
  /// futex in the uninstrumented runtime), invisible to TSan, which then reports the protected
  /// accesses as races. In ordinary builds the annotations are one predictable branch each.
  @inlinable
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
