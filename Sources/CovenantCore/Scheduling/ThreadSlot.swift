import CCovenantShims

/// The thread-local slots (`cov_tls_slots`) of the Swift layer. The slot numbers are defined
/// once, in CCovenantShims.h (`COV_TLS_SLOT_*`); these are their Swift names, usable from
/// inlinable code (they fold to constants).
///
/// Accessed through the out-of-line `cov_tls_load`/`cov_tls_store`, except in the few functions
/// that read or write a slot before anything in them can suspend and are never inlined
/// (`ResolutionDrain.notify`, `tellAsDrain`, `tellQueuedBeforeWaiting()`): those may use the
/// inline `cov_tls_get_unsafe_after_suspension`/`cov_tls_set_unsafe_after_suspension`, half the
/// instructions. The optimizer treats a thread-local address as constant within a function, so
/// an inlined access after a suspension could read the slot of the thread the coroutine was
/// suspended on; `.ci/c-layers.sh` fails on a use of the inline accessors anywhere else, or in
/// one of those functions without `@inline(never)`.
@usableFromInline
enum ThreadSlot {
  /// The `CoroutineContext` whose body runs on this thread right now, unretained.
  @inlinable static var coroutine: Int32 { Int32(COV_TLS_SLOT_COROUTINE) }
  /// The `SchedulerTurn` of the scheduler task running on this thread, if any.
  @inlinable static var turn: Int32 { Int32(COV_TLS_SLOT_TURN) }
  /// The `ResolutionDrain` running on this stack, if any (kept per stack by the fiber layer).
  @inlinable static var resolution: Int32 { Int32(COV_TLS_SLOT_RESOLUTION) }
}
