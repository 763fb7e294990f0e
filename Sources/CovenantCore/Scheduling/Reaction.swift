/// The one kind of object the promise core handles: told about a resolution it observes
/// (`observedResolution`), and/or run as a task of a scheduler (`run`).
///
/// A `then` is one `Reaction` that is both: it waits in its source's observer chain, is then
/// dispatched itself (no closure, no block: see `DirectDispatch`), and runs the block on its
/// queue. Coroutines are reactions too, so promise blocks and coroutine slices share one
/// dispatch path and one hand-off slot (`SchedulerTurn`).
///
/// Reactions are linked into a cell's observer chain through `nextInChain` (see
/// `ResolutionCell`); a reaction is in at most one chain at a time.
///
/// `@unchecked Sendable`: reactions are handed between threads by the core, which orders every
/// hand-over through a lock or an atomic.
@usableFromInline
package class Reaction: @unchecked Sendable {
  /// The next reaction of the chain this one is in, which this link owns; `none` at the end.
  /// Its tag marks this reaction given up (`ReactionChain.givenUpMark`). Written under the
  /// owning cell's lock; read by the notifier after it took the chain out of the cell.
  @usableFromInline final let nextInChain = InlineAtomic<ReactionBits>(uninitialized: ())

  /// The next reaction of the chain this reaction was in, taken by the notifier that is about
  /// to tell it (the link's retain passes to the caller), without the given-up mark. Debug
  /// builds leave the link poisoned: a second take of it stops the program.
  @inlinable @inline(__always)
  final func takeLink() -> ReactionBits {
    let next = nextInChain.load(ordering: .relaxed).untagged
    // Inside an assert: compiled away in release builds, without a "never executed" warning.
    assert(
      {
        nextInChain.store(.poisoned, ordering: .relaxed)
        return true
      }())
    return next
  }

  /// Debug builds: marks the link of a reaction that left its chain (told, or taken out) as
  /// given away, so that registering it again finds it free, and a stale read of it stops the
  /// program. Release builds: nothing.
  @inlinable @inline(__always)
  final func poisonLink() {
    // Inside an assert: compiled away in release builds, without a "never executed" warning.
    assert(
      {
        nextInChain.store(.poisoned, ordering: .relaxed)
        return true
      }())
  }

  /// Whether the reaction's link is free: it is in no chain (`none` when new, poisoned in
  /// debug builds once it left one). For assertions.
  @inlinable final var linkIsFree: Bool {
    let link = nextInChain.load(ordering: .relaxed)
    return link.isNone || link.untagged == .poisoned || !_isDebugAssertConfiguration()
  }

  /// Whether telling this reaction (`observedResolution`) may run code that resolves further
  /// promises or futures before it returns: a closure observer, a coroutine resumed on the
  /// spot. A reaction that only hands itself or a coroutine to a dispatch queue does not, so a
  /// resolution whose only observer it is needs no `ResolutionDrain`. Written before the
  /// reaction is registered (under the cell's lock), read by the notifier after taking the
  /// chain.
  @usableFromInline @exclusivity(unchecked) final var resolvesInlineWhenTold: Bool

  @usableFromInline init(resolvesInlineWhenTold: Bool = true) {
    self.resolvesInlineWhenTold = resolvesInlineWhenTold
    nextInChain.store(.none, ordering: .relaxed)
  }

  /// Called once, synchronously on the resolving thread and outside any lock, when the cell
  /// this reaction observes is resolved. `cell` points to that `ResolutionCell` inside `owner`
  /// (a `Promise` or `CoFuture`, passed unretained: it may be in its `deinit`); both are valid
  /// for the duration of the call only, unless the reaction retains `owner`.
  @usableFromInline func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer)
  {}

  /// Runs the reaction as a task of its scheduler.
  func run() {}

  /// The identity of the scheduler the reaction runs on, for the hand-off slot.
  var schedulerIdentity: ObjectIdentifier? { nil }

  /// Whether running this reaction ends a unit of `DispatchGroup.promises` (promise blocks do;
  /// coroutine slices do not).
  var leavesPromiseGroup: Bool { false }

  /// Sends a reaction that did not get its turn in a hand-off slot back through its scheduler.
  func reschedule() {}
}

/// A retained reference to a reaction, as the links of observer chains hold it.
@usableFromInline
package typealias ReactionBits = UnsafeRetainedBits<Reaction>
