import CCoroutineContext
import CCovenantShims

/// A `cov_lock_t` (`os_unfair_lock` on Apple platforms, a futex word on Linux) whose address
/// never changes while it is borrowed; see ``AtomicStorage`` for why `@_rawLayout`.
@_rawLayout(like: cov_lock_t)
@usableFromInline
package struct LockStorage: ~Copyable {
  @inlinable init() {}
}

/// A value protected by a lock, both stored inline in their owner; the same code on every
/// platform.
///
/// It replaces `Synchronization.Mutex`, which needs iOS 18, tvOS 18, watchOS 11, visionOS 2 and
/// macOS 15. Declare it with `let`; ``withLock(_:)`` is the only way to the value.
///
/// ```swift
/// final class Registry: Sendable {
///   private let names = InlineMutex<[String]>([])
///   func add(_ name: String) { names.withLock { $0.append(name) } }
/// }
/// ```
///
/// ThreadSanitizer sees the lock itself: on Linux the futex word's acquiring compare-exchange and
/// releasing exchange, on Apple platforms its `os_unfair_lock` interceptor. Every critical section
/// is also bracketed with `cov_sync_acquire` / `cov_sync_release` on the lock's address, the
/// annotations Covenant's TSan builds are checked for (Architecture.md, "Sanitizers").
///
/// Covenant's own critical sections call ``withCriticalSection(_:)``, its out-of-line form.
@usableFromInline
// `@unchecked Sendable`: the value is reached only through `withLock`, under the lock.
package struct InlineMutex<Value>: ~Copyable, @unchecked Sendable {
  // Declaration order is layout order: the lock at offset 0, the value at `valueOffset`.
  @usableFromInline let lock: LockStorage
  /// Reached only through `withLock`, by address: a `let` owner never assigns it.
  @usableFromInline var value: Value

  @inlinable
  package init(_ initialValue: Value) {
    lock = LockStorage()
    value = initialValue
    withUnsafePointer(to: lock) {
      cov_lock_init(UnsafeMutableRawPointer(mutating: $0))
    }
  }

  /// Where `value` lies from the start of the struct: after the lock, rounded up to the value's
  /// alignment (Swift lays out a struct's stored properties in declaration order; the tests check
  /// this against `MemoryLayout` for values of every alignment).
  @inlinable
  package static var valueOffset: Int {
    let alignment = MemoryLayout<Value>.alignment
    return (MemoryLayout<LockStorage>.size + alignment - 1) & ~(alignment - 1)
  }

  /// Runs `body` with exclusive access to the value.
  ///
  /// The body must not suspend a coroutine or re-enter this lock: neither lock is recursive,
  /// and `os_unfair_lock` must be released by the thread that took it.
  @inlinable
  package func withLock<Result, E: Error>(
    _ body: (inout Value) throws(E) -> Result
  ) throws(E) -> Result {
    try withUnsafePointer(to: self) { (mutex: UnsafePointer<Self>) throws(E) -> Result in
      let base = UnsafeMutableRawPointer(mutating: mutex)  // the lock: offset 0
      cov_lock_lock(base)
      cov_sync_acquire(base)  // before the first access to the value: TSan checks `inout` there
      defer {
        cov_sync_release(base)
        cov_lock_unlock(base)
      }
      return try body(&(base + Self.valueOffset).assumingMemoryBound(to: Value.self).pointee)
    }
  }
}

extension InlineMutex {
  /// ``withLock(_:)``, kept out of line: every critical section of Covenant goes through here.
  ///
  /// Why `@inline(never)` (callers still specialize it): a critical section must read the
  /// identity of the thread it runs on *now*. Inlined into a function that also suspends a
  /// coroutine — `awaitReceive`, `awaitSend`, `await` — anything it read of the current thread
  /// before the suspension could be reused by the optimizer after the coroutine resumed on
  /// another thread. `Synchronization.Mutex`, which Covenant used before this layer, did exactly
  /// that on Linux: it records its owner's thread id, read through a runtime call the optimizer
  /// treats as pure, and then trapped ("Recursive call to lock Mutex", "unlock … on a thread
  /// which hasn't acquired the lock"). This lock reads no thread identity in Swift: the futex
  /// word holds 0, 1 or 2, and `os_unfair_lock` reads its owner inside its own out-of-line calls.
  /// The function stays out of line all the same, so that no change of lock can bring the
  /// hazard back, and so that each critical section is one function rather than a copy in every
  /// caller (`Benchmarks/AtomicsMicro`: 29 instructions per round trip out of line, 24 inlined).
  ///
  /// ThreadSanitizer: ``withLock(_:)`` makes the section's annotations, `cov_sync_acquire` before
  /// the first access to the value (TSan checks an `inout` access where it begins) and
  /// `cov_sync_release` before the unlock; `LockAnnotationTests` checks that they are on exactly
  /// in TSan builds, and that a contended hand-over is seen.
  @inlinable @inline(never)
  package func withCriticalSection<Result, E: Error>(
    _ body: (inout Value) throws(E) -> Result
  ) throws(E) -> Result {
    try withLock(body)
  }
}
