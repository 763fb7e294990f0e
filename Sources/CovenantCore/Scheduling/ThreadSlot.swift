import CCoroutineContext

/// The thread-local slots (`cov_tls_slots`) of the Swift layer. The slot numbers are defined
/// once, in CCoroutineContext.h (`COV_TLS_SLOT_*`); these are their Swift names, usable from
/// inlinable code (they fold to constants).
///
/// Always accessed through the out-of-line `cov_tls_load`/`cov_tls_store`: the optimizer treats
/// a thread-local address as constant within a function, so an inlined access after a
/// suspension could read the slot of the thread the coroutine was suspended on.
@usableFromInline
enum ThreadSlot {
  /// The `CoroutineContext` whose body runs on this thread right now, unretained.
  @inlinable static var coroutine: Int32 { Int32(COV_TLS_SLOT_COROUTINE) }
  /// The `SchedulerTurn` of the scheduler task running on this thread, if any.
  @inlinable static var turn: Int32 { Int32(COV_TLS_SLOT_TURN) }
  /// The `ResolutionDrain` running on this stack, if any (kept per stack by the fiber layer).
  @inlinable static var resolution: Int32 { Int32(COV_TLS_SLOT_RESOLUTION) }
}
