import Dispatch

/// The parts of `select` that work on the kept cases: the random pick of `selectUnbiased` and
/// the wait.
///
/// The wait is Go's, with claim-based wake-ups and no lock held across channels: each case
/// queues a waiter in its own channel under that channel's lock only, every waiter sharing the
/// coroutine's one waker. Whoever completes a case first wins the waker's claim, so exactly
/// one case happens, and the select then takes its other waiters out of their queues. A case
/// found ready while queuing is performed only after the select has won its own claim (a peer
/// of an earlier case, or a cancel, may have won it); if that case's peers all turn out stale,
/// the select wakes itself and starts over (the stale peers are gone by then, so this ends).
extension SelectSlots {
  /// Tries the cases in a uniformly random order and performs the first that can complete
  /// without waiting, returning what its body returns: every ready case has the same chance.
  /// `nil` if none could.
  @inlinable
  func attemptInRandomOrder() throws -> Output? {
    if count > SelectRandomOrder.maxCount { return try attemptInShuffledOrder() }
    var order = SelectRandomOrder(count: count)
    while let index = order.next() {
      let slot = self[index]
      if let output = try slot.pointee.complete(slot, true) { return output }
    }
    return nil
  }

  /// `attemptInRandomOrder` for a select of many cases (it allocates the order).
  @usableFromInline
  func attemptInShuffledOrder() throws -> Output? {
    var generator = SelectRandom.Generator()
    for index in (0..<count).shuffled(using: &generator) {
      let slot = self[index]
      if let output = try slot.pointee.complete(slot, true) { return output }
    }
    return nil
  }

  /// Suspends the current coroutine until one case completes, and returns what its body
  /// returns (every other waiter withdrawn first); `nil` if `timeout` expired first (no case is
  /// then performed).
  ///
  /// - Throws: what the body throws; `CoroutineError.calledOutsideCoroutine`;
  ///   `CoroutineError.canceled` if the coroutine is cancelled first (no case is then
  ///   performed).
  ///
  /// A case of a derived receiver whose stage drops what the case received (a `filter`) makes
  /// the select go on waiting, for what is left of `timeout`: the start is read on the clock of
  /// the scheduler's timers when the select first waits with a timeout.
  @inlinable @inline(never)  // specialized, but kept out of `select`'s fast path
  func wait(timeout: DispatchTimeInterval) throws -> Output? {
    // fatalError, not precondition: an optimized build drops a precondition's message.
    if count == 0, case .never = timeout {
      fatalError("CoChannel.select needs at least one case, a default or a timeout")
    }
    let coroutine = try CoroutineHandle.current()
    var timeout = timeout
    let deadline = SelectDeadline(timeout, from: coroutine)
    while true {
      // A retry after a stale case (below) waits for the whole interval again: a race that
      // leaves no time to speak of.
      let timedOut: Bool
      do {
        timedOut = try coroutine.suspend(.select, timeout: timeout) { waker in
          for index in 0..<count {
            let slot = self[index]
            switch slot.pointee.step(slot, .register(waker)) {
            case .queued: continue
            case .won, .stale: return waker.wake()
            case .lost: return
            }
          }
        }
      } catch {
        forEach(.withdraw)
        throw error
      }
      var winner: UnsafeMutablePointer<Slot>?
      for index in 0..<count {
        let slot = self[index]
        if case .won = slot.pointee.step(slot, .withdraw) { winner = slot }
      }
      if let winner {
        if let output = try winner.pointee.complete(winner, false) { return output }
        // The winner was a derived receiver whose stage dropped the element it received (a
        // `filter` that rejected it): nothing was performed, wait again, until the deadline.
        timeout = deadline.remaining(for: coroutine)
        continue
      }
      if timedOut { return nil }
      // Woken by ourselves with nothing performed (all peers were stale): try again.
    }
  }
}
