import CCovenantShims

/// The thread-local slots (`cov_tls_slots`) of the Swift layer, and the only Swift code that
/// touches them. The slot numbers are defined once, in CCovenantShims.h (`COV_TLS_SLOT_*`);
/// these are their Swift names, usable from inlinable code (they fold to constants).
///
/// Two ways in, named for when each is valid:
/// - `load` / `store`: out of line (`cov_tls_load` / `cov_tls_store`), valid anywhere. The
///   optimizer treats a thread-local address as constant within a function, so an inlined
///   access after a suspension could read the slot of the thread the coroutine was suspended
///   on: anything that may run after a suspension in the same function uses these.
/// - `loadBeforeAnySuspension` / `storeBeforeAnySuspension`: inlined, half the instructions,
///   and only valid before anything in the calling function can suspend a coroutine. The
///   calling function must be `@inline(never)`, so that the compiler cannot merge it into a
///   caller that suspended before: `.ci/lint.sh` checks this, and that no other
///   Swift file reaches the slots.
@usableFromInline
enum ThreadSlot {
  /// The `CoroutineContext` whose body runs on this thread right now, unretained.
  @inlinable static var coroutine: Int32 { Int32(COV_TLS_SLOT_COROUTINE) }
  /// The `SchedulerTurn` of the scheduler task running on this thread, if any.
  @inlinable static var turn: Int32 { Int32(COV_TLS_SLOT_TURN) }
  /// The `ResolutionDrain` running on this stack, if any (kept per stack by the fiber layer).
  @inlinable static var resolution: Int32 { Int32(COV_TLS_SLOT_RESOLUTION) }

  /// The value of `slot` on the thread running now.
  @inlinable @inline(__always)
  static func load(_ slot: Int32) -> UnsafeMutableRawPointer? { cov_tls_load(slot) }

  /// Sets `slot` on the thread running now.
  @inlinable @inline(__always)
  static func store(_ slot: Int32, _ value: UnsafeMutableRawPointer?) {
    cov_tls_store(slot, value)
  }

  /// `load`, inlined: only in an `@inline(never)` function, before anything in it can suspend.
  @inlinable @inline(__always)
  static func loadBeforeAnySuspension(_ slot: Int32) -> UnsafeMutableRawPointer? {
    cov_tls_get_unsafe_after_suspension(slot)
  }

  /// `store`, inlined: only in an `@inline(never)` function, before anything in it can suspend.
  @inlinable @inline(__always)
  static func storeBeforeAnySuspension(_ slot: Int32, _ value: UnsafeMutableRawPointer?) {
    cov_tls_set_unsafe_after_suspension(slot, value)
  }
}
