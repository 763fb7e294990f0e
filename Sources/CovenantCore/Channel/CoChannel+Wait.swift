/// Where a waiting operation stands after `ChannelState.enqueueOrPerform`.
@usableFromInline
enum ChannelWaitStep<Outcome> {
  /// The waiter is in line; a peer (or a cancel) will claim and wake the coroutine.
  case queued
  /// The operation turned out ready and the coroutine claimed its own wait to perform it: it
  /// must wake itself. `nil` when every waiting peer was stale: nothing happened, try again.
  case performed(Outcome?)
  /// Someone else claimed the wait first (a cancel, or another case of the same `select`):
  /// nothing was done here.
  case lost
}

extension ChannelState {
  /// One channel's part of a wait, under its lock: queue `waiter`, or, if the operation is
  /// ready after all, perform it — but only after winning the coroutine's own claim, since the
  /// coroutine is already waitable (a cancel or another `select` case may have won it).
  @inlinable
  mutating func enqueueOrPerform<Operation: ChannelOperation<Element>>(
    _ operation: Operation, waiter: ChannelWaiter<Element>, waker: CoroutineWaker,
    _ effects: inout ChannelEffects<Element>
  ) -> ChannelWaitStep<Result<Operation.Value, CoChannelError>> {
    guard operation.isReady(in: &self, for: waker) else {
      operation.enqueue(waiter, in: &self)
      return .queued
    }
    guard waker.claim() else { return .lost }
    return .performed(operation.performNow(in: &self, &effects))
  }
}

extension CoChannel {
  /// Performs `operation` if it can complete without waiting (the whole of `poll`, `offer`,
  /// and the first step of every other operation); `nil` if it would have to wait.
  @inlinable
  func performNow<Operation: ChannelOperation<Element>>(_ operation: Operation)
    -> Result<Operation.Value, CoChannelError>?
  {
    locked { state, effects in operation.performNow(in: &state, &effects) }
  }

  /// Whether `operation` may complete now, judged without the lock (`readiness`): `false`
  /// means it could not a moment ago.
  @inlinable
  func mightCompleteNow<Operation: ChannelOperation<Element>>(_ operation: Operation) -> Bool {
    readiness.pointee.load(ordering: .relaxed) & Operation.readinessBit != 0
  }

  /// The wait of `awaitReceive` / `awaitSend` once the operation could not complete at once:
  /// suspends the current coroutine until `operation` completes, following the claim / wake
  /// protocol of `ChannelWaiter`.
  ///
  /// - Throws: `CoroutineError.calledOutsideCoroutine`; `CoroutineError.canceled` if the
  ///   coroutine is cancelled first (the operation then has not happened).
  @inlinable
  func wait<Operation: ChannelOperation<Element>>(for operation: Operation) throws
    -> Result<Operation.Value, CoChannelError>
  {
    let coroutine = try CoroutineHandle.current()
    while true {
      var queued: ChannelWaiter<Element>?
      var performed: Result<Operation.Value, CoChannelError>?
      do {
        try coroutine.suspend(Operation.waitKind, detail: metadataBits(type(of: self))) { waker in
          let waiter = makeWaiter(waker, element: operation.carriedElement)
          let step = locked { state, effects in
            state.enqueueOrPerform(operation, waiter: waiter, waker: waker, &effects)
          }
          switch step {
          case .queued:
            queued = waiter
          case .performed(let outcome):
            performed = outcome
            recycle(waiter)
            waker.wake()
          case .lost:
            recycle(waiter)
          }
        }
      } catch {
        if let queued { _ = withdraw(queued, operation) }
        throw error
      }
      if let queued, let outcome = withdraw(queued, operation) { return outcome }
      if let performed { return performed }
      // Woken with nothing done (every waiting peer was stale): go round again.
    }
  }

  /// Ends the wait of `waiter`, which was queued for `operation`: its outcome if a peer
  /// completed it, else `nil` after taking it out of its queue. Either way the waiter is kept
  /// for reuse. Call only once the wait is over (woken, or its suspension threw), so that
  /// nobody can claim it any more.
  @inlinable
  func withdraw<Operation: ChannelOperation<Element>>(
    _ waiter: ChannelWaiter<Element>, _ operation: Operation
  ) -> Result<Operation.Value, CoChannelError>? {
    if waiter.isDone {
      let outcome = operation.outcome(of: waiter)
      recycle(waiter)
      return outcome
    }
    takeOut(waiter, operation)
    return nil
  }

  /// Takes `waiter`, queued for `operation` and not completed by anyone, out of its queue, and
  /// keeps it for reuse unless the queue still holds it (as a tombstone). Call only once the
  /// wait is over.
  @inlinable
  func takeOut<Operation: ChannelOperation<Element>>(
    _ waiter: ChannelWaiter<Element>, _ operation: Operation
  ) {
    // The unsent element is released here, once the lock is released: its deinit may use
    // the channel.
    let (reusable, _) = locked { state, effects in
      operation.withdraw(waiter, from: &state, &effects)
    }
    if reusable { recycle(waiter) }
  }
}
