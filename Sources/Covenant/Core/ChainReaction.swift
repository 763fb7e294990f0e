import Dispatch
import Synchronization

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
  @usableFromInline let sourceOwner = Atomic<UInt>(0)

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

/// `then`'s value and `Void` forms: the block runs with the value (a rejection skips it and is
/// passed on), and `derived` gets the block's result (`map`) or the value itself
/// (`passThrough`, where `Derived` is `Source`).
///
/// Its fields are the derived promise and plain closures of the generic parameters only:
/// nothing in its layout or deinitialization needs generic metadata (a closure type that
/// mentions `Result` or another generic type does, which is why the other steps live in
/// `TransformReaction`). No `Result` is built either.
@usableFromInline
final class ThenReaction<Source, Derived>: QueuedReaction, @unchecked Sendable {
  @usableFromInline let derived: Promise<Derived>
  @usableFromInline let map: ((Source) throws -> Derived)?
  @usableFromInline let passThrough: ((Source) throws -> Void)?
  /// `performStep`, compiled where `then` was called: there the types are known, so loading the
  /// value and resolving `derived` are specialized (in this module's unspecialized `runStep`
  /// they would cost a few hundred instructions of value-witness calls per step). A closure
  /// that captures nothing: no allocation (unless the caller is itself unspecialized).
  @usableFromInline let specializedStep: (QueuedReaction, UnsafePointer<ResolutionCell>) -> Void

  @inlinable init(
    queue: DispatchQueue, derived: Promise<Derived>, map: ((Source) throws -> Derived)? = nil,
    passThrough: ((Source) throws -> Void)? = nil
  ) {
    self.derived = derived
    self.map = map
    self.passThrough = passThrough
    specializedStep = { reaction, cell in
      unsafeDowncast(reaction, to: ThenReaction<Source, Derived>.self).performStep(cell)
    }
    super.init(queue: queue)
  }

  override func runStep(_ cell: UnsafePointer<ResolutionCell>) { specializedStep(self, cell) }

  @inlinable final func performStep(_ cell: UnsafePointer<ResolutionCell>) {
    guard cell.pointee.currentStatus == CellStatus.fulfilled else {
      derived.reject(cell.pointee.loadError())
      return
    }
    let value = cell.pointee.loadValue(as: Source.self)
    do {
      if let map {
        derived.fulfillReturned(try map(value))
      } else if let passThrough {
        try passThrough(value)
        assert(Derived.self == Source.self, "a pass-through step derives a promise of its source's type")
        derived.fulfill(unsafeBitCast(value, to: Derived.self))
      }
    } catch {
      derived.reject(error)
    }
  }
}

/// Every other chained step: `transform` decides `derived`'s outcome from the source's
/// `Result` (`catch`, `recover`, `always`, `validate`, a `then` returning a promise, …), or
/// `observe` is just told the outcome (FBLPromise's `observeOnQueue`, for `all`, `any`, `race`).
@usableFromInline
final class TransformReaction<Source, Derived>: QueuedReaction, @unchecked Sendable {
  @usableFromInline let derived: Promise<Derived>?
  @usableFromInline let transform: ((Result<Source, any Error>) throws -> ChainOutcome<Derived>)?
  @usableFromInline let observe: ((Result<Source, any Error>) -> Void)?

  @inlinable init(
    queue: DispatchQueue, derived: Promise<Derived>?,
    transform: ((Result<Source, any Error>) throws -> ChainOutcome<Derived>)? = nil,
    observe: ((Result<Source, any Error>) -> Void)? = nil
  ) {
    self.derived = derived
    self.transform = transform
    self.observe = observe
    super.init(queue: queue)
  }

  override func runStep(_ cell: UnsafePointer<ResolutionCell>) {
    let result = cell.pointee.resolvedResult(as: Source.self)
    if let transform, let derived {
      do { derived.settle(try transform(result)) } catch { derived.reject(error) }
    } else if let observe {
      observe(result)
    }
  }
}
