import Dispatch
import Synchronization

/// A chained step of a promise — a `then`, `catch`, `recover`, … block — as one object: it is
/// the registration in the source's observer chain *and* the work item dispatched to `queue`
/// (FBLPromise's `observeOnQueue`/`chainOnQueue`, without a closure or block per step).
///
/// Told that the source resolved, it keeps the source alive, dispatches itself through
/// `DispatchGroup.promises` (or the running task's hand-off slot), and on `queue` runs its step
/// with the source's outcome and resolves `derived`.
///
/// Exactly one of `map`, `transform`, `observe` is set. They are optional closures rather than
/// an enum so that the layout does not depend on `Source`/`Derived` (see `ResolutionCell`).
@usableFromInline
final class ChainReaction<Source, Derived>: Reaction, @unchecked Sendable {
  @usableFromInline let queue: DispatchQueue
  /// The promise this step resolves (nil for a bare `observe(on:)`). Kept alive by this
  /// reaction, which the source's chain keeps alive until the source resolves.
  @usableFromInline let derived: Promise<Derived>?
  /// `then`'s value form: fulfil `derived` with the block's result (or reject with a returned
  /// error, see `returnedError`); a rejection skips the block.
  @usableFromInline let map: ((Source) throws -> Derived)?
  /// Every other step: decides `derived`'s outcome from the source's.
  @usableFromInline let transform: ((Result<Source, any Error>) throws -> ChainOutcome<Derived>)?
  /// `observe(on:)`: just told the outcome.
  @usableFromInline let observe: ((Result<Source, any Error>) -> Void)?
  /// The resolved source (the retained bits of its owner) and its cell, set when notified.
  @usableFromInline let sourceOwner = Atomic<UInt>(0)
  @usableFromInline let sourceCell = Atomic<UInt>(0)

  @inlinable init(
    queue: DispatchQueue, derived: Promise<Derived>?,
    map: ((Source) throws -> Derived)? = nil,
    transform: ((Result<Source, any Error>) throws -> ChainOutcome<Derived>)? = nil,
    observe: ((Result<Source, any Error>) -> Void)? = nil
  ) {
    self.queue = queue
    self.derived = derived
    self.map = map
    self.transform = transform
    self.observe = observe
  }

  @usableFromInline override func observedResolution(
    of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer
  ) {
    _ = owner.retain()  // released by `run` (or `deinit`, if never run)
    sourceOwner.store(UInt(bitPattern: owner.toOpaque()), ordering: .relaxed)
    sourceCell.store(UInt(bitPattern: cell), ordering: .relaxed)
    // The dispatch (a queue push, or the hand-off slot of this thread) orders these stores
    // before `run` reads them.
    PromiseDispatch.dispatch(self, on: queue)
  }

  override func run() {
    let ownerBits = sourceOwner.exchange(0, ordering: .relaxed)
    let owner = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: ownerBits)!)
      .takeRetainedValue()
    let cell = UnsafeRawPointer(bitPattern: sourceCell.load(ordering: .relaxed))!
      .assumingMemoryBound(to: ResolutionCell<Source>.self)
    withExtendedLifetime(owner) {
      if let map, let derived {
        guard cell.pointee.currentStatus == CellStatus.fulfilled else {
          derived.reject(cell.pointee.loadError())
          return
        }
        do { derived.fulfillReturned(try map(cell.pointee.loadValue())) } catch {
          derived.reject(error)
        }
      } else if let transform, let derived {
        do { derived.settle(try transform(cell.pointee.resolvedResult)) } catch {
          derived.reject(error)
        }
      } else if let observe {
        observe(cell.pointee.resolvedResult)
      }
    }
  }

  deinit {
    let ownerBits = sourceOwner.load(ordering: .relaxed)
    if ownerBits != 0 {
      Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: ownerBits)!).release()
    }
  }

  override var schedulerIdentity: ObjectIdentifier? { ObjectIdentifier(queue) }
  override var leavesPromiseGroup: Bool { true }
  override func reschedule() { DirectDispatch.async(self, on: queue) }
}
