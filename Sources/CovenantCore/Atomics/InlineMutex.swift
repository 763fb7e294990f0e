import CCoroutineContext

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
@usableFromInline
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
