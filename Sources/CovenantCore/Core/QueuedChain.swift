import Dispatch

/// A chain of reactions queued in a `ResolutionDrain`: the rest of a resolved cell's observer
/// chain, with the cell's owner.
struct QueuedChain {
  /// The owner of the resolved cell (a `Promise` or `CoFuture`), retained until its chain has
  /// been told; `none` for a chain only to release (its cell was deallocated while pending).
  /// Tagged `leavesPromiseGroup` when the owner is a promise, which leaves
  /// `DispatchGroup.promises` once its chain has been told.
  var owner: OwnerBits
  /// The next reaction to tell, owned; the others are linked through `nextInChain`.
  var next: ReactionBits

  static var leavesPromiseGroup: UInt { 1 }

  /// The chain `next` of the resolved cell of `owner` (whose retain it takes over).
  init(owner: OwnerBits, leavesPromiseGroup: Bool, next: ReactionBits) {
    assert(!owner.isNone && owner.tags == 0, "a queued chain's owner is retained, untagged")
    self.owner = leavesPromiseGroup ? owner.tagged(Self.leavesPromiseGroup) : owner
    self.next = next
  }

  /// The chain `head` of a cell deallocated while pending: only to release.
  init(toRelease head: ReactionBits) {
    owner = .none
    next = head
  }

  /// The owner, unretained (the chain keeps it); `nil` for a chain only to release.
  var ownerObject: Unmanaged<AnyObject>? { owner.isNone ? nil : owner.unmanaged }

  /// After its last reaction was told: the owner leaves the promise group if it is a promise,
  /// and is released.
  func finish() {
    if owner.tags & Self.leavesPromiseGroup != 0 { DispatchGroup.promises.leave() }
    if !owner.isNone { owner.release() }
  }
}

/// A retained reference to the owner of a resolved cell (a `Promise` or `CoFuture`).
@usableFromInline
typealias OwnerBits = UnsafeRetainedBits<AnyObject>
