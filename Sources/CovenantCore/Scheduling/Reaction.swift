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
class Reaction: @unchecked Sendable {
  /// The next reaction of the chain this one is in: the bits of a retained `Unmanaged`
  /// reference, 0 at the end. Written under the owning cell's lock; read by the notifier after
  /// it took the chain out of the cell.
  @usableFromInline final let nextInChain = InlineAtomic<UInt>(uninitialized: ())

  /// Whether telling this reaction (`observedResolution`) may run code that resolves further
  /// promises or futures before it returns: a closure observer, a coroutine resumed on the
  /// spot. A reaction that only hands itself or a coroutine to a dispatch queue does not, so a
  /// resolution whose only observer it is needs no `ResolutionDrain`. Written before the
  /// reaction is registered (under the cell's lock), read by the notifier after taking the
  /// chain.
  @usableFromInline @exclusivity(unchecked) final var resolvesInlineWhenTold: Bool

  @usableFromInline init(resolvesInlineWhenTold: Bool = true) {
    self.resolvesInlineWhenTold = resolvesInlineWhenTold
    nextInChain.store(0, ordering: .relaxed)
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
