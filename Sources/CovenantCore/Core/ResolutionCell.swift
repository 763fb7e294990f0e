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
    let head = chain.withLock { $0.take() }
    if head != 0 { ResolutionDrain.release(head) }
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
  @inlinable package func fulfill<Value>(_ value: Value) -> UInt? {
    chain.withCriticalSection { chain -> UInt? in fulfillLocked(value, &chain) }
  }

  /// Rejects the cell if pending; see `fulfill`.
  @inlinable package func reject(_ error: any Error) -> UInt? {
    chain.withCriticalSection { chain -> UInt? in rejectLocked(error, &chain) }
  }

  /// `fulfill` under the lock: if the cell is pending, stores `value`, then the fulfilled status
  /// (with release ordering), and takes the chain.
  ///
  /// Out of line on purpose. `fulfill`'s closure reaches `withCriticalSection` through a thunk
  /// the compiler makes (a specialization that keeps the generic closure's abstraction), and the
  /// compiler marks every call in a thunk `noinline`: the status's atomics, C functions
  /// (`cov_atomics.h`), would stay calls there. Here they are inlined.
  @inlinable @inline(never)
  func fulfillLocked<Value>(_ value: Value, _ chain: inout ReactionChain) -> UInt? {
    guard status.load(ordering: .relaxed) == CellStatus.pending else { return nil }
    storeValue(value)
    status.store(CellStatus.fulfilled, ordering: .releasing)
    return chain.take()
  }

  /// `reject` under the lock; see `fulfillLocked`.
  @inlinable @inline(never)
  func rejectLocked(_ error: any Error, _ chain: inout ReactionChain) -> UInt? {
    guard status.load(ordering: .relaxed) == CellStatus.pending else { return nil }
    storeError(error)
    status.store(CellStatus.rejected, ordering: .releasing)
    return chain.take()
  }

  /// Resolves the cell with `result` if pending; see `fulfill`.
  @inlinable func resolve<Value>(_ result: Result<Value, any Error>) -> UInt? {
    switch result {
    case .success(let value): return fulfill(value)
    case .failure(let error): return reject(error)
    }
  }

  /// Takes the chain of a cell whose owner is being deallocated while pending (a `CoFuture`
  /// tells it that it was cancelled); 0 when empty.
  @inlinable func takeChainOfAbandoned() -> UInt {
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
    reaction.nextInChain.store(0, ordering: .relaxed)
    let bits = UInt(bitPattern: Unmanaged.passRetained(reaction).toOpaque())
    let added = chain.withCriticalSection { chain -> Bool in
      guard status.load(ordering: .relaxed) == CellStatus.pending else { return false }
      chain.append(bits)
      return true
    }
    if !added { Unmanaged<Reaction>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
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
    let bits = UInt(bitPattern: Unmanaged.passUnretained(reaction).toOpaque())
    let (removed, unlinked) = chain.withCriticalSection { chain -> (Bool, UInt) in
      // Pending: nothing took the chain, so the reaction is in it (it registers once per await,
      // and only a compaction, of reactions that already gave up, unlinks any other way).
      guard status.load(ordering: .relaxed) == CellStatus.pending else { return (false, 0) }
      return chain.giveUp(bits)
    }
    if removed { Unmanaged<Reaction>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    if unlinked != 0 { tellUnlinked(unlinked) }
    return removed
  }

  /// Tells the given-up reactions that `giveUp` unlinked (`head`: linked through `nextInChain`,
  /// each retained) that their link is free, and releases them. Their awaits have ended, so
  /// telling them reads neither the cell nor its owner (still pending, still alive here).
  @usableFromInline func tellUnlinked(_ head: UInt) {
    let cell = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
    let owner = Unmanaged<AnyObject>.fromOpaque(cell - Self.offsetInOwner)
    var next = head
    while next != 0 {
      let reaction = Unmanaged<Reaction>.fromOpaque(UnsafeRawPointer(bitPattern: next)!)
        .takeRetainedValue()
      next = reaction.nextInChain.load(ordering: .relaxed)
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

  // MARK: Payload

  /// Whether values are stored in the three words (else in a `ValueBox`): values that fit and
  /// may be moved bit for bit. A value that is not bitwise-takable (on Apple platforms, one
  /// holding a `weak` reference to an Objective-C-compatible object, whose runtime record
  /// points at the variable's address) must stay at one address: it is boxed.
  @inlinable package static func storesInline<Value>(_ type: Value.Type) -> Bool {
    MemoryLayout<Value>.size <= 3 * MemoryLayout<UInt>.stride
      && MemoryLayout<Value>.alignment <= MemoryLayout<UInt>.alignment
      && (_isPOD(Value.self) || _isBitwiseTakable(Value.self))
  }

  // The payload crosses between typed values and the atomic words through a scratch tuple on
  // the stack, touched only through a pointer laundered by the out-of-line `cov_opaque_pointer`
  // (typed initialization, raw word loads and stores). Without the laundering the optimizer
  // knows the pointer is the `(UInt, UInt, UInt)` variable, and may forward that variable's
  // initial zeros past the typed store into the raw loads: a release-mode miscompile we hit
  // (`Promise(MyError.failed).error` crashed). Not `withUnsafeTemporaryAllocation`, which is
  // correct but, in unspecialized code, asks the runtime for `Result` metadata on every call
  // (its cost per chained `then` is in the Performance article, "Design choices and what they
  // save").

  @inlinable func storeValue<Value>(_ value: Value) {
    if !Self.storesInline(Value.self) || !_isPOD(Value.self) {
      payloadNeedsDestroy.store(true, ordering: .relaxed)
    }
    if Self.storesInline(Value.self) {
      var scratch: (UInt, UInt, UInt) = (0, 0, 0)
      withUnsafeMutableBytes(of: &scratch) { buffer in
        let raw = cov_opaque_pointer(buffer.baseAddress!)!
        raw.initializeMemory(as: Value.self, to: value)  // owned by the words from here on
        storeWords(from: raw)
      }
    } else {
      word0.store(
        UInt(bitPattern: Unmanaged.passRetained(ValueBox(value)).toOpaque()), ordering: .relaxed)
    }
  }

  @inlinable func storeWords(from raw: UnsafeMutableRawPointer) {
    let word = MemoryLayout<UInt>.stride
    word0.store(raw.load(as: UInt.self), ordering: .relaxed)
    word1.store(raw.load(fromByteOffset: word, as: UInt.self), ordering: .relaxed)
    word2.store(raw.load(fromByteOffset: 2 * word, as: UInt.self), ordering: .relaxed)
  }

  @inlinable func loadWords(into raw: UnsafeMutableRawPointer) {
    let word = MemoryLayout<UInt>.stride
    raw.storeBytes(of: word0.load(ordering: .relaxed), as: UInt.self)
    raw.storeBytes(of: word1.load(ordering: .relaxed), toByteOffset: word, as: UInt.self)
    raw.storeBytes(of: word2.load(ordering: .relaxed), toByteOffset: 2 * word, as: UInt.self)
  }

  /// The value of a fulfilled cell (read after an acquiring `status` load): a copy.
  @inlinable package func loadValue<Value>(as type: Value.Type) -> Value {
    if Self.storesInline(Value.self) {
      var scratch: (UInt, UInt, UInt) = (0, 0, 0)
      return withUnsafeMutableBytes(of: &scratch) { buffer in
        let raw = cov_opaque_pointer(buffer.baseAddress!)!
        loadWords(into: raw)
        return raw.load(as: Value.self)
      }
    }
    return Unmanaged<ValueBox<Value>>.fromOpaque(
      UnsafeRawPointer(bitPattern: word0.load(ordering: .relaxed))!
    ).takeUnretainedValue().value
  }

  @inlinable func storeError(_ error: any Error) {
    payloadNeedsDestroy.store(true, ordering: .relaxed)
    var scratch: UInt = 0
    withUnsafeMutableBytes(of: &scratch) { buffer in
      let raw = cov_opaque_pointer(buffer.baseAddress!)!
      raw.initializeMemory(as: (any Error).self, to: error)  // owned by the word from here on
      word0.store(raw.load(as: UInt.self), ordering: .relaxed)
    }
  }

  /// The error of a rejected cell (read after an acquiring `status` load): a copy.
  @inlinable package func loadError() -> any Error {
    var scratch: UInt = 0
    return withUnsafeMutableBytes(of: &scratch) { buffer in
      let raw = cov_opaque_pointer(buffer.baseAddress!)!
      raw.storeBytes(of: word0.load(ordering: .relaxed), as: UInt.self)
      return raw.load(as: (any Error).self)
    }
  }

  @inlinable func destroyValue<Value>(as type: Value.Type) {
    if Self.storesInline(Value.self) {
      guard !_isPOD(Value.self) else { return }
      var scratch: (UInt, UInt, UInt) = (0, 0, 0)
      withUnsafeMutableBytes(of: &scratch) { buffer in
        let raw = cov_opaque_pointer(buffer.baseAddress!)!
        loadWords(into: raw)
        raw.bindMemory(to: Value.self, capacity: 1).deinitialize(count: 1)
      }
    } else {
      Unmanaged<ValueBox<Value>>.fromOpaque(
        UnsafeRawPointer(bitPattern: word0.load(ordering: .relaxed))!
      )
      .release()
    }
  }

  @inlinable func destroyError() {
    var scratch: UInt = 0
    withUnsafeMutableBytes(of: &scratch) { buffer in
      let raw = cov_opaque_pointer(buffer.baseAddress!)!
      raw.storeBytes(of: word0.load(ordering: .relaxed), as: UInt.self)
      raw.bindMemory(to: (any Error).self, capacity: 1).deinitialize(count: 1)
    }
  }
}

/// The states of `ResolutionCell.status`.
@usableFromInline
enum CellStatus {
  @usableFromInline static let pending: UInt8 = 0
  @usableFromInline static let fulfilled: UInt8 = 1
  @usableFromInline static let rejected: UInt8 = 2
}

/// A value too large for a cell's three words, or a `select` payload too large for its slot
/// (`SelectPayloadStorage`).
@usableFromInline
final class ValueBox<Value> {
  @usableFromInline let value: Value
  @inlinable init(_ value: Value) { self.value = value }
}

/// A cell's registered reactions: a singly linked chain through `Reaction.nextInChain`, each
/// link the bits of a retained reference. Only touched under the cell's lock.
///
/// A reaction whose await ended without the resolution (a cancelled or timed-out coroutine)
/// leaves the chain. At the head that is one step. Anywhere else the walk from the head to its
/// predecessor would make N awaiters given up in reverse order cost N² steps, and a reaction
/// has no room for a backward link (a coroutine's object fills its heap block to the byte), so
/// the reaction is *given up* instead: marked, in the low bit of its own link (`givenUpMark`;
/// objects are aligned), and left in place. A resolution tells it like the others (an ended
/// await ignores it); otherwise a *compaction* unlinks every given-up reaction in one walk, as
/// soon as more were given up than half the chain's length at the last compaction: constant
/// amortized time per give-up and per registration, and given-up reactions never outnumber
/// the live ones for long. The head is never a given-up reaction (taking one out of the head
/// takes the given-up ones behind it too), so a chain whose reactions have all given up is
/// empty.
@usableFromInline
struct ReactionChain: Sendable {
  @usableFromInline var head: UInt = 0
  @usableFromInline var tail: UInt = 0
  /// Reactions given up since the last compaction (still linked).
  @usableFromInline var givenUp: UInt32 = 0
  /// The chain's length after the last compaction; 0 before any, so the first give-up in a
  /// chain compacts it (learning its length).
  @usableFromInline var lengthAtCompaction: UInt32 = 0

  /// The bit of a reaction's `nextInChain` that marks it given up.
  @usableFromInline static var givenUpMark: UInt { 1 }

  @inlinable init() {}

  @inlinable static func reaction(_ bits: UInt) -> Reaction {
    Unmanaged<Reaction>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
  }

  @inlinable mutating func append(_ bits: UInt) {
    if tail != 0 {
      // Or'ed in: a given-up tail keeps its mark.
      let last = Self.reaction(tail)
      last.nextInChain.store(last.nextInChain.load(ordering: .relaxed) | bits, ordering: .relaxed)
    } else {
      head = bits
    }
    tail = bits
  }

  /// Empties the chain, returning its head (0 when empty). Links may carry `givenUpMark`.
  @inlinable mutating func take() -> UInt {
    let first = head
    self = ReactionChain()
    return first
  }

  /// Takes `bits`, a reaction linked here, out of the chain (`removed`: the caller releases it)
  /// or gives it up (see the type's comment). `unlinked`: the given-up reactions unlinked on the
  /// way (possibly `bits` itself), linked through `nextInChain`, retained: to tell, then
  /// release; 0 if none.
  @usableFromInline mutating func giveUp(_ bits: UInt) -> (removed: Bool, unlinked: UInt) {
    let reaction = Self.reaction(bits)
    let link = reaction.nextInChain.load(ordering: .relaxed)
    assert(link & Self.givenUpMark == 0, "a registration is given up once")
    guard bits == head else {
      reaction.nextInChain.store(link | Self.givenUpMark, ordering: .relaxed)
      givenUp &+= 1
      guard UInt64(givenUp) * 2 > UInt64(lengthAtCompaction) else { return (false, 0) }
      return (false, compact())
    }
    head = link
    if tail == bits { tail = 0 }
    return (true, unlinkGivenUpHeads())
  }

  /// After the head was taken out: unlinks the given-up reactions now at the head.
  private mutating func unlinkGivenUpHeads() -> UInt {
    var unlinked: UInt = 0
    while head != 0 {
      let first = head
      let reaction = Self.reaction(first)
      let link = reaction.nextInChain.load(ordering: .relaxed)
      guard link & Self.givenUpMark != 0 else { break }
      head = link & ~Self.givenUpMark
      if tail == first { tail = 0 }
      reaction.nextInChain.store(unlinked, ordering: .relaxed)
      unlinked = first
      givenUp &-= 1
    }
    return unlinked
  }

  /// Unlinks every given-up reaction, in one walk.
  private mutating func compact() -> UInt {
    var unlinked: UInt = 0
    var previous: UInt = 0
    var current = head
    var length: UInt32 = 0
    while current != 0 {
      let reaction = Self.reaction(current)
      let link = reaction.nextInChain.load(ordering: .relaxed)
      let next = link & ~Self.givenUpMark
      if link & Self.givenUpMark != 0 {
        // `previous` is live: its link carries no mark to keep.
        if previous == 0 {
          head = next
        } else {
          Self.reaction(previous).nextInChain.store(next, ordering: .relaxed)
        }
        reaction.nextInChain.store(unlinked, ordering: .relaxed)
        unlinked = current
      } else {
        length &+= 1
        previous = current
      }
      current = next
    }
    tail = previous
    givenUp = 0
    lengthAtCompaction = length
    return unlinked
  }

  /// How many reactions are linked, given-up ones included.
  var count: Int {
    var count = 0
    var current = head
    while current != 0 {
      count += 1
      current = Self.reaction(current).nextInChain.load(ordering: .relaxed) & ~Self.givenUpMark
    }
    return count
  }
}
