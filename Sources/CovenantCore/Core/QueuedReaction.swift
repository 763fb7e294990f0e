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
class QueuedReaction: Reaction, @unchecked Sendable {
  @usableFromInline let queue: DispatchQueue
  /// The resolved source: the retained bits of the owner of its cell, set when notified.
  @usableFromInline let sourceOwner = InlineAtomic<UInt>(0)

  @usableFromInline init(queue: DispatchQueue) {
    self.queue = queue
    super.init(resolvesInlineWhenTold: false)  // it only dispatches itself
  }

  @usableFromInline override func observedResolution(
    of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer
  ) {
    _ = owner.retain()  // released by `run` (or `deinit`, if never run)
    // Releasing, paired with the acquiring exchange in `run`: whatever thread runs the step
    // sees this reaction's fields and the source as they were here, without relying on the
    // queue hand-over being visible to ThreadSanitizer (libdispatch is not instrumented).
    sourceOwner.store(UInt(bitPattern: owner.toOpaque()), ordering: .releasing)
    PromiseDispatch.dispatch(self, on: queue)
  }

  override final func run() {
    let ownerBits = sourceOwner.exchange(0, ordering: .acquiring)
    let owner = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: ownerBits)!)
    defer { owner.release() }  // after the step: the cell lives inside the owner
    runStep(ResolutionCell.address(in: owner).assumingMemoryBound(to: ResolutionCell.self))
  }

  /// The step itself, on `queue`, with the resolved source's cell.
  func runStep(_ cell: UnsafePointer<ResolutionCell>) {}

  deinit {
    let ownerBits = sourceOwner.load(ordering: .relaxed)
    if ownerBits != 0 {
      Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: ownerBits)!).release()
    }
  }

  override final var schedulerIdentity: ObjectIdentifier? { ObjectIdentifier(queue) }
  override final var leavesPromiseGroup: Bool { true }
  override final func reschedule() { DirectDispatch.async(self, on: queue) }
}
