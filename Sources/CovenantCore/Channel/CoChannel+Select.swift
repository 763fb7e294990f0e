extension CoChannel where Element == Never {
  /// Waits for the first of several channel operations to complete, performs exactly that one,
  /// and returns what its body returns (Go's `select`, Kotlin's `select {}`).
  ///
  /// ```swift
  /// let message: String = try CoChannel.select { select in
  ///   select.onReceive(numbers) { number in "number \(number)" }
  ///   select.onReceive(names.receiver) { name in "name \(name)" }
  ///   select.onSend(acks, true) { "acknowledged" }
  ///   select.onDefault { "nothing ready" }          // optional: don't wait
  /// }
  /// ```
  ///
  /// - If some cases are ready at once, the first of them in the order they were added is
  ///   performed. Otherwise, with `onDefault`, the default body runs; without one, the calling
  ///   coroutine suspends until one case can complete, and that case is performed.
  /// - Exactly one case is performed: the others consume nothing, send nothing, and leave no
  ///   waiter behind in their channels.
  /// - Bodies run on the calling coroutine after the select has completed, with no lock held;
  ///   an error a body throws is rethrown by `select`.
  /// - A receive case on a closed-and-drained or cancelled channel, and a send case on a closed
  ///   or cancelled channel, are ready: `onReceive` / `onSend` make `select` throw the
  ///   `CoChannelError`, `onReceiveResult` hands it to its body.
  ///
  /// - Throws: what the chosen body throws; `CoChannelError` as described;
  ///   `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a coroutine;
  ///   `CoroutineError.canceled` if the coroutine is cancelled while waiting (no case is then
  ///   performed).
  public static func select<Output>(
    _ build: (CoChannelSelector<Output>) throws -> Void
  ) throws -> Output {
    let selector = CoChannelSelector<Output>()
    try build(selector)
    return try ChannelSelect(selector.cases).run(default: selector.defaultBody)
  }
}

/// The select algorithm (Go's, with claim-based wake-ups).
///
/// All the cases' channels are locked together, in address order so that concurrent selects
/// cannot deadlock. With the locks held, the first ready case is performed; if none is ready a
/// waiter for every case is queued, all sharing the coroutine's one waker, and the coroutine
/// suspends. Whoever completes a case first wins the waker's claim, so exactly one case
/// happens; the select then removes its other waiters.
///
/// While queuing, the coroutine is already waitable, so only a cancel can compete for its
/// claim: a case found ready there is performed only after the select has claimed its own
/// waker. If that case's peers all turn out stale (they were claimed elsewhere meanwhile), the
/// select wakes itself and starts over; the stale peers are gone by then, so this ends.
struct ChannelSelect<Output> {
  /// In the order given (that is the priority order).
  let cases: [any SelectCase<Output>]
  /// The same cases, in lock order.
  private let lockOrder: [any SelectCase<Output>]

  init(_ cases: [any SelectCase<Output>]) {
    self.cases = cases
    lockOrder = cases.enumerated().sorted { left, right in
      let (l, r) = (left.element.channelIdentity, right.element.channelIdentity)
      return l != r ? l < r : left.offset < right.offset  // by address, then as given
    }.map(\.element)
  }

  func run(default defaultBody: (() throws -> Output)?) throws -> Output {
    // fatalError, not precondition: an optimized build drops a precondition's message.
    if cases.isEmpty && defaultBody == nil {
      fatalError("CoChannel.select needs at least one case or a default")
    }
    // First try: nothing is queued and the coroutine (if any) is not waitable, so a ready case
    // can be performed without claiming anything of ours.
    var winner: (any SelectCase<Output>)?
    withAllLocked {
      for selectCase in cases where selectCase.isReady && selectCase.complete() {
        winner = selectCase
        break
      }
    }
    runEffects()
    if let winner { return try winner.run() }
    if let defaultBody { return try defaultBody() }

    let coroutine = try CoroutineHandle.current()
    while true {
      do {
        try coroutine.suspend { waker in
          var wakeSelf = false
          withAllLocked {
            var claimed = false
            for selectCase in cases where selectCase.isReady {
              if !claimed {
                guard waker.claim() else { return }  // cancelled: suspend throws
                claimed = true
              }
              if selectCase.complete() { break }
            }
            if claimed {
              wakeSelf = true
              return
            }
            for selectCase in cases { selectCase.register(waker) }
          }
          runEffects()
          if wakeSelf { waker.wake() }
        }
      } catch {
        deregisterAll()
        throw error
      }
      deregisterAll()
      if let winner = cases.first(where: { $0.isDone }) { return try winner.run() }
      // Woken by ourselves with nothing done (all peers were stale): try again.
    }
  }

  /// Runs `body` with every case's channel locked, each channel once, in lock order.
  private func withAllLocked(_ body: () -> Void) {
    func lock(from index: Int) {
      guard index < lockOrder.count else { return body() }
      let selectCase = lockOrder[index]
      if index > 0, lockOrder[index - 1].channelIdentity == selectCase.channelIdentity {
        selectCase.shareLock(with: lockOrder[index - 1])
        lock(from: index + 1)
        selectCase.lockedState = nil
      } else {
        selectCase.withChannelLocked { lock(from: index + 1) }
      }
    }
    lock(from: 0)
  }

  private func deregisterAll() {
    for selectCase in cases { selectCase.deregister() }
    runEffects()
  }

  private func runEffects() {
    for selectCase in cases { selectCase.runEffects() }
  }
}
