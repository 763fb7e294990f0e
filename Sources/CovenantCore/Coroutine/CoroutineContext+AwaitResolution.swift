import Dispatch

/// The await on a `ResolutionCell` (a promise's or a future's `await()`): the coroutine is its
/// own registration in the cell's chain, so that an await needs no closure, no waker value and,
/// after the coroutine's first await, no allocation.
///
/// The protocol, in the order it runs:
/// 1. `beginWait` opens a generation; `register(in:generation:)` stores it in `registration`
///    and links the coroutine into the cell's chain (or wins the await at once if the cell is
///    resolved).
/// 2. The resolution tells the coroutine (`registrationNotified`): it marks the registration
///    notified and claims the generation it was made for; a claim of an await that already
///    ended fails.
/// 3. An await that ended without the resolution (cancelled, timed out) takes the coroutine out
///    of the chain (`leaveChain`). If a resolution took the chain first, its notifier may still
///    read the coroutine's link: the registration is *stale* until that notifier has told it,
///    and an await in between registers an `AwaitReaction` of its own instead.
extension CoroutineContext {
  static let staleRegistration: UInt64 = 1 << 63
  static let notifiedRegistration: UInt64 = 1 << 62
  static let registrationFlags = staleRegistration | notifiedRegistration

  /// Suspends until `cell` is resolved, with the coroutine itself registered in the cell: one
  /// lock round trip to register, no allocation, and no closure or waker value in between.
  ///
  /// A cancelled await takes the coroutine out of the chain again; if a resolution had already
  /// taken the chain, its notifier may still read the coroutine's link, so until that notifier
  /// has called `observedResolution` (which clears `staleRegistration`) later awaits register
  /// an `AwaitReaction` of their own instead.
  ///
  /// Returns whether the await was cancelled (rather than throwing: the caller, which uses the
  /// coroutine unretained, then needs no closure frame that can throw; with shared stacks
  /// every frame between the body and the switch is copied when the coroutine is evicted).
  func awaitResolution(of cell: borrowing ResolutionCell, awaiting type: Any.Type) -> Bool {
    do { try awaitResolutionThrowing(of: cell, awaiting: type) } catch { return true }
    return false
  }

  /// The current coroutine's `awaitResolution`, with the coroutine used unretained (its own
  /// first frame keeps it alive while its body runs).
  /// - Throws: `.calledOutsideCoroutine` outside a coroutine; `.canceled` if the coroutine is
  ///   or becomes cancelled first.
  static func awaitCurrent(
    resolutionOf cell: borrowing ResolutionCell, awaiting type: Any.Type
  ) throws(CoroutineError) {
    guard let coroutine = currentUnmanaged else { throw .calledOutsideCoroutine }
    if coroutine._withUnsafeGuaranteedRef({ $0.awaitResolution(of: cell, awaiting: type) }) {
      throw .canceled
    }
  }

  @inline(__always)
  func awaitResolutionThrowing(
    of cell: borrowing ResolutionCell, awaiting type: Any.Type
  ) throws(CoroutineError) {
    let generation = try beginWait()
    noteWait(.resolution, detail: metadataBits(type))
    guard _fastPath(registration.load(ordering: .acquiring) & Self.staleRegistration == 0) else {
      let reaction = AwaitReaction(self, generation: generation, wakesInline: queueBits.isNone)
      _ = try awaitResolution(of: cell, through: reaction)
      return
    }
    register(in: cell, generation: generation)
    do {
      try completeWait()
    } catch {
      leaveChain(of: cell)
      throw error
    }
  }

  /// `awaitResolution(of:)` that gives up after `timeout`; returns true if it did. The
  /// registration then leaves the cell's chain, as after a cancel, so nothing in the cell keeps
  /// the coroutine.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled first.
  func awaitResolution(
    of cell: borrowing ResolutionCell, awaiting type: Any.Type, timeout: DispatchTimeInterval
  ) throws(CoroutineError) -> Bool {
    let generation = try beginWait()
    noteWait(.resolution, timed: true, detail: metadataBits(type))
    guard registration.load(ordering: .acquiring) & Self.staleRegistration == 0 else {
      let reaction = AwaitReaction(self, generation: generation, wakesInline: queueBits.isNone)
      return try awaitResolution(of: cell, through: reaction, timeout: timeout)
    }
    register(in: cell, generation: generation)
    let armed = armTimer(after: timeout, generation: generation)
    defer { if armed { disarmTimer() } }
    do {
      try completeWait()
    } catch {
      leaveChain(of: cell)
      throw error
    }
    guard wait.flags & WaitState.timedOutWake != 0 else { return false }
    leaveChain(of: cell)
    return true
  }

  /// Registers the coroutine itself in `cell` for await `generation` (or, if the cell is
  /// resolved already, wins that await at once).
  @inline(__always)
  func register(in cell: borrowing ResolutionCell, generation: UInt64) {
    assert(
      registration.load(ordering: .relaxed) & Self.staleRegistration == 0,
      "the coroutine registers itself only once no cell can read its old link")
    registration.store(generation, ordering: .relaxed)
    // Whether telling it resumes it on the spot: on a scheduler other than a dispatch queue
    // (set here, where the coroutine is in no chain, as its scheduler may change between awaits).
    resolvesInlineWhenTold = queueBits.isNone
    let registered = Unmanaged.passUnretained(self)._withUnsafeGuaranteedRef { cell.register($0) }
    if !registered, wait.claim(generation) {
      _ = wait.wake()  // resolved meanwhile: not suspended, so nothing to schedule
    }
  }

  /// After an await that ended unresolved (cancelled or timed out): the coroutine may still be
  /// in `cell`'s chain. If a resolution took the chain, its notifier may still read the link:
  /// unless it is already done (notified), it clears the stale mark when it is.
  @inline(never)
  func leaveChain(of cell: borrowing ResolutionCell) {
    if cell.unregister(self) { return }
    let old = registration.bitwiseOr(Self.staleRegistration, ordering: .acquiringAndReleasing)
      .oldValue
    if old & Self.notifiedRegistration != 0 {
      registration.bitwiseAnd(~Self.staleRegistration, ordering: .relaxed)
    }
  }

  /// The rest of an await registered through `reaction` (while the coroutine itself may still
  /// be linked into a cell it gave up on), with a timer if `timeout` is given. Returns whether
  /// that timer won.
  @inline(never)
  func awaitResolution(
    of cell: borrowing ResolutionCell, through reaction: AwaitReaction,
    timeout: DispatchTimeInterval? = nil
  ) throws(CoroutineError) -> Bool {
    if !cell.register(reaction), wait.claim(reaction.generation) { _ = wait.wake() }
    let armed = timeout.map { armTimer(after: $0, generation: reaction.generation) } ?? false
    defer { if armed { disarmTimer() } }
    do {
      try completeWait()
    } catch {
      _ = cell.unregister(reaction)  // if a resolution took it, the reaction is simply dropped
      throw error
    }
    guard wait.flags & WaitState.timedOutWake != 0 else { return false }
    _ = cell.unregister(reaction)
    return true
  }

  /// The cell this coroutine awaits is resolved: resumes the await the registration was made
  /// for (a stale notification finds its claim refused). The notifier has read the link before
  /// calling this, so afterwards the coroutine may register itself again.
  @inline(__always)
  func registrationNotified() {
    // An add, not an or (one instruction, no compare-and-swap loop): the bit is clear, as each
    // registration is notified at most once and the coroutine clears it when it registers.
    let old = registration.wrappingAdd(Self.notifiedRegistration, ordering: .acquiringAndReleasing)
      .oldValue
    assert(old & Self.notifiedRegistration == 0, "a registration is told once")
    if wait.claim(old & ~Self.registrationFlags), wait.wake() { schedule() }
    if old & Self.staleRegistration != 0 {
      registration.bitwiseAnd(~Self.staleRegistration, ordering: .releasing)
    }
  }
}
