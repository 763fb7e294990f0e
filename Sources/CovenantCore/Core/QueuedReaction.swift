import Dispatch

/// A chained step of a promise — a `then`, `catch`, `recover`, … block — as one object: it is
/// the registration in the source's observer chain *and* the work item dispatched to `queue`
/// (FBLPromise's `observeOnQueue`/`chainOnQueue`, without a closure or block per step).
///
/// Told that the source resolved, it keeps the source alive, dispatches itself through
/// `DispatchGroup.promises` (or the running task's hand-off slot), and on `queue` runs its step
/// (`runStep`, in the subclasses) with the source's cell.
///
/// Not generic: what every step shares is compiled once, and the generic subclasses hold only
/// the step's own fields.
@usableFromInline
// `@unchecked Sendable` (restated from `Reaction`): `sourceOwner` is published with a releasing
// store and taken with an acquiring exchange (see `observedResolution`).
class QueuedReaction: Reaction, @unchecked Sendable {
  @usableFromInline let queue: DispatchQueue
  /// The resolved source: the owner of its cell, retained, set when notified.
  @usableFromInline let sourceOwner = InlineAtomic<OwnerBits>(.none)

  @usableFromInline init(queue: DispatchQueue) {
    self.queue = queue
    super.init(resolvesInlineWhenTold: false)  // it only dispatches itself
  }

  @usableFromInline override func observedResolution(
    of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer
  ) {
    // Released by `run` (or `deinit`, if never run). Releasing, paired with the acquiring
    // exchange in `run`: whatever thread runs the step sees this reaction's fields and the
    // source as they were here, without relying on the queue hand-over being visible to
    // ThreadSanitizer (libdispatch is not instrumented).
    assert(sourceOwner.load(ordering: .relaxed).isNone, "a chained step is told once")
    sourceOwner.store(OwnerBits(retaining: owner), ordering: .releasing)
    PromiseDispatch.dispatch(self, on: queue)
  }

  override final func run() {
    let owner = sourceOwner.exchange(.none, ordering: .acquiring)
    defer { owner.release() }  // after the step: the cell lives inside the owner
    runStep(
      ResolutionCell.address(in: owner.unmanaged).assumingMemoryBound(to: ResolutionCell.self))
  }

  /// The step itself, on `queue`, with the resolved source's cell.
  func runStep(_ cell: UnsafePointer<ResolutionCell>) {}

  deinit {
    let owner = sourceOwner.load(ordering: .relaxed)
    if !owner.isNone { owner.release() }
  }

  override final var schedulerIdentity: ObjectIdentifier? { ObjectIdentifier(queue) }
  override final var leavesPromiseGroup: Bool { true }
  override final func reschedule() { DirectDispatch.async(self, on: queue) }
}
