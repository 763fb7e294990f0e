import CCovenantShims

// The payload words, the scratch tuples that move values in and out of them and the cell's
// place in its owner (after a two-word object header) are laid out for 8-byte words.
#if !_pointerBitWidth(_64)
  #error("Covenant's ResolutionCell supports 64-bit targets only")
#endif

/// The one state/observer core behind both `Promise` and `CoFuture`.
///
/// It holds pending → fulfilled(Value) or rejected(Error), once, and the reactions registered
/// while pending. Locking lives here and nowhere else: registering takes the lock once,
/// resolving takes it once, and the reactions a resolution hands back are notified *outside*
/// the lock, so they may freely touch the cell again.
///
/// Reading a resolved cell takes no lock at all: `status` is stored with release ordering after
/// the payload was written (under the lock) and loaded with acquire ordering, and the payload
/// never changes afterwards. `await()` of a finished future is one atomic load and a copy.
///
/// The cell is not generic: every field is an atomic word, and the typed operations are generic
/// *methods* told the value type by their owner (`Promise<Value>`, `CoFuture<Value>`). The
/// value lives in three words when it fits (size and alignment of at most three machine words —
/// every `Int`, `String`, `Array`, class reference, …), else in a `ValueBox`; an error lives in
/// the first word. No result is ever boxed in `Any` or cast back, and code that runs
/// unspecialized — the owners' deinitializers, the chained steps run from a queue — never asks
/// the runtime for the metadata of a generic cell type (a hash-table lookup each time).
///
/// The owner must call `destroyPayload(as:)` in its `deinit`: the cell itself does not know
/// the value's type.
@usableFromInline
package struct ResolutionCell: ~Copyable {
  @usableFromInline let status: InlineByteAtomic<UInt8>
  @usableFromInline let word0: InlineAtomic<UInt>
  @usableFromInline let word1: InlineAtomic<UInt>
  @usableFromInline let word2: InlineAtomic<UInt>
  /// Whether the payload holds something to release (an error, a boxed value, a value that is
  /// not plain bits): decided where the type is known, so that the owner's `deinit` — which
  /// runs unspecialized — skips `destroyPayload` for plain values without any generic call.
  @usableFromInline let payloadNeedsDestroy: InlineByteAtomic<Bool>
  /// The reactions registered while pending, in registration order.
  @usableFromInline let chain: InlineMutex<ReactionChain>

  @inlinable package init() {
    status = InlineByteAtomic(CellStatus.pending)
    word0 = InlineAtomic(0)
    word1 = InlineAtomic(0)
    word2 = InlineAtomic(0)
    payloadNeedsDestroy = InlineByteAtomic(false)
    chain = InlineMutex(ReactionChain())
  }

  @inlinable init<Value>(fulfilledWith value: Value) {
    self.init()
    storeValue(value)
    status.store(CellStatus.fulfilled, ordering: .releasing)
  }

  @inlinable init(rejectedWith error: any Error) {
    self.init()
    storeError(error)
    status.store(CellStatus.rejected, ordering: .releasing)
  }

  @inlinable init<Value>(resolved result: Result<Value, any Error>) {
    switch result {
    case .success(let value): self.init(fulfilledWith: value)
    case .failure(let error): self.init(rejectedWith: error)
    }
  }

  /// Inlined into the owners' `deinit`s (one call less per promise or future: with the lock's
  /// C functions, the optimizer no longer inlines it by itself).
  @inline(__always)
  deinit {
    // A resolved cell's chain was taken by its resolution (and nothing is added after it).
    guard status.load(ordering: .relaxed) == CellStatus.pending else { return }
    let head = chain.withCriticalSection { $0.take() }
    if !head.isNone { ResolutionDrain.release(head) }
  }

  // MARK: Place in the owner

  /// The distance from the start of an owner object (a `Promise` or `CoFuture`) to its cell:
  /// the cell is the owner's first stored property, right after the two-word object header
  /// (its alignment is at most a word's: checked by `assertLocated(in:)` and the tests).
  @inlinable static var offsetInOwner: Int { 2 * MemoryLayout<UInt>.stride }

  /// The cell of `owner`, a `Promise` or `CoFuture`: valid as long as `owner` is alive, which
  /// is what reactions are told (they retain `owner` to keep using it).
  @inlinable package static func address(in owner: Unmanaged<AnyObject>) -> UnsafeRawPointer {
    UnsafeRawPointer(owner.toOpaque()) + offsetInOwner
  }

  /// Checks, in debug builds, that this cell sits where `address(in:)` finds it in `owner`.
  @inlinable func assertLocated(in owner: AnyObject) {
    assert(
      MemoryLayout<ResolutionCell>.alignment <= MemoryLayout<UInt>.alignment
        && withUnsafePointer(to: self) { UnsafeRawPointer($0) }
          == Self.address(in: Unmanaged.passUnretained(owner)),
      "ResolutionCell must be the first stored property of its owner")
  }

  /// Destroys the value or error; the owner's `deinit` calls it once, with its value type.
  @inlinable package func destroyPayload<Value>(as type: Value.Type) {
    guard payloadNeedsDestroy.load(ordering: .relaxed) else { return }
    switch status.load(ordering: .acquiring) {
    case CellStatus.fulfilled: destroyValue(as: type)
    case CellStatus.rejected: destroyError()
    default: break
    }
  }

  // MARK: Reading (lock-free once resolved)

  /// `CellStatus.pending`, `.fulfilled` or `.rejected`, with acquire ordering: after a resolved
  /// status, the payload may be read.
  @inlinable var currentStatus: UInt8 { status.load(ordering: .acquiring) }

  @inlinable var isPending: Bool { currentStatus == CellStatus.pending }

  /// The result if resolved.
  @inlinable package func result<Value>(as type: Value.Type) -> Result<Value, any Error>? {
    switch currentStatus {
    case CellStatus.fulfilled: return .success(loadValue(as: type))
    case CellStatus.rejected: return .failure(loadError())
    default: return nil
    }
  }

  /// The result of a cell known to be resolved.
  @inlinable func resolvedResult<Value>(as type: Value.Type) -> Result<Value, any Error> {
    currentStatus == CellStatus.fulfilled ? .success(loadValue(as: type)) : .failure(loadError())
  }

  // MARK: Resolving

  /// Fulfils the cell if pending; returns the chain of reactions to notify (`notify`), or nil
  /// when it was already resolved (later resolutions are no-ops).
  @inlinable package func fulfill<Value>(_ value: Value) -> ReactionBits? {
    chain.withCriticalSection { chain -> ReactionBits? in fulfillLocked(value, &chain) }
  }

  /// Rejects the cell if pending; see `fulfill`.
  @inlinable package func reject(_ error: any Error) -> ReactionBits? {
    chain.withCriticalSection { chain -> ReactionBits? in rejectLocked(error, &chain) }
  }

  /// `fulfill` under the lock: if the cell is pending, stores `value`, then the fulfilled status
  /// (with release ordering), and takes the chain.
  ///
  /// Out of line on purpose. `fulfill`'s closure reaches `withCriticalSection` through a thunk
  /// the compiler makes (a specialization that keeps the generic closure's abstraction), and the
  /// compiler marks every call in a thunk `noinline`: the status's atomics, C functions
  /// (`cov_atomics.h`), would stay calls there. Here they are inlined.
  @inlinable @inline(never)
  func fulfillLocked<Value>(_ value: Value, _ chain: inout ReactionChain) -> ReactionBits? {
    guard status.load(ordering: .relaxed) == CellStatus.pending else { return nil }
    storeValue(value)
    status.store(CellStatus.fulfilled, ordering: .releasing)
    return chain.take()
  }

  /// `reject` under the lock; see `fulfillLocked`.
  @inlinable @inline(never)
  func rejectLocked(_ error: any Error, _ chain: inout ReactionChain) -> ReactionBits? {
    guard status.load(ordering: .relaxed) == CellStatus.pending else { return nil }
    storeError(error)
    status.store(CellStatus.rejected, ordering: .releasing)
    return chain.take()
  }

  /// Resolves the cell with `result` if pending; see `fulfill`.
  @inlinable func resolve<Value>(_ result: Result<Value, any Error>) -> ReactionBits? {
    switch result {
    case .success(let value): return fulfill(value)
    case .failure(let error): return reject(error)
    }
  }

  /// Takes the chain of a cell whose owner is being deallocated while pending (a `CoFuture`
  /// tells it that it was cancelled); `none` when empty.
  @inlinable func takeChainOfAbandoned() -> ReactionBits {
    chain.withCriticalSection { $0.take() }
  }

  /// Tells `reaction` at once that the (resolved) cell of `owner` is resolved.
  @inlinable static func tell(_ reaction: Reaction, owner: AnyObject) {
    let owner = Unmanaged.passUnretained(owner)
    reaction.observedResolution(of: owner, cell: address(in: owner))
  }

  // MARK: Observing

  /// Adds `reaction` to the chain if the cell is pending and returns true; returns false (and
  /// keeps nothing) when it is already resolved.
  @inlinable func register(_ reaction: Reaction) -> Bool {
    if currentStatus != CellStatus.pending { return false }
    assert(reaction.linkIsFree, "a reaction is in one chain at a time")
    reaction.nextInChain.store(.none, ordering: .relaxed)
    let bits = ReactionBits(retaining: reaction)
    let added = chain.withCriticalSection { chain -> Bool in
      guard status.load(ordering: .relaxed) == CellStatus.pending else { return false }
      chain.append(bits)
      return true
    }
    if !added { bits.release() }
    return added
  }

  /// For a reaction registered here whose await ended without the resolution (cancelled, timed
  /// out): takes it out of the chain (true), in constant amortized time wherever it is; or
  /// returns false when it stays linked until it is told (`observedResolution`), once — by the
  /// resolution, which may already have taken the chain, or by a compaction of given-up
  /// reactions (see `ReactionChain`).
  ///
  /// Only for reactions that telling after their await has ended merely frees (an awaiting
  /// coroutine, an `AwaitReaction`): they may be told with the cell still pending.
  @inlinable func unregister(_ reaction: Reaction) -> Bool {
    let bits = ReactionBits(ownedElsewhere: Unmanaged.passUnretained(reaction))
    let (removed, unlinked) = chain.withCriticalSection { chain -> (Bool, ReactionBits) in
      // Pending: nothing took the chain, so the reaction is in it (it registers once per await,
      // and only a compaction, of reactions that already gave up, unlinks any other way).
      guard status.load(ordering: .relaxed) == CellStatus.pending else { return (false, .none) }
      return chain.giveUp(bits)
    }
    if removed { bits.release() }
    if !unlinked.isNone { tellUnlinked(unlinked) }
    return removed
  }

  /// Tells the given-up reactions that `giveUp` unlinked (`head`: linked through `nextInChain`,
  /// each retained) that their link is free, and releases them. Their awaits have ended, so
  /// telling them reads neither the cell nor its owner (still pending, still alive here).
  @usableFromInline func tellUnlinked(_ head: ReactionBits) {
    let cell = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
    let owner = Unmanaged<AnyObject>.fromOpaque(cell - Self.offsetInOwner)
    var next = head
    while !next.isNone {
      let reaction = next.take()
      next = reaction.takeLink()
      reaction.observedResolution(of: owner, cell: cell)
    }
  }

  /// How many reactions are linked in the chain, given-up ones included (0 once resolved).
  package var registeredReactionCount: Int {
    chain.withCriticalSection { $0.count }
  }

  /// Runs `observer` synchronously on the resolving thread once resolved; at once, on this
  /// thread, when it already is.
  @inlinable func whenResolved<Value>(_ observer: @escaping (Result<Value, any Error>) -> Void) {
    if currentStatus == CellStatus.pending, register(ClosureReaction(observer)) { return }
    observer(resolvedResult(as: Value.self))
  }
}

/// The states of `ResolutionCell.status`.
@usableFromInline
enum CellStatus {
  @usableFromInline static let pending: UInt8 = 0
  @usableFromInline static let fulfilled: UInt8 = 1
  @usableFromInline static let rejected: UInt8 = 2
}
