/// Where a channel is in its life.
@usableFromInline
enum ChannelPhase {
  case open
  /// No more sends; receivers drain what was sent before.
  case closed
  /// Everything dropped; every operation fails with `canceled`.
  case canceled
}

/// Everything a channel guards with its one mutex, and the operations on it. Every method runs
/// with the lock held; what must happen after unlocking (wakes, callbacks) goes into
/// `ChannelEffects`.
///
/// Invariants (ignoring stale waiters and tombstones, which are skipped and dropped when met, and
/// the waiters of one `select` that both sends to and receives from the channel, which are no
/// partners for each other):
/// - receivers wait only while the buffer is empty and no sender waits;
/// - senders wait only while the buffer is full (always, for a rendezvous channel) and no
///   receiver waits; `.unlimited` and `.conflated` never have waiting senders.
///
/// `@unchecked Sendable`: only ever touched inside the channel's mutex.
@usableFromInline
struct ChannelState<Element>: @unchecked Sendable {
  /// Buffer slots: 0 for a rendezvous channel, `Int.max` for an unlimited one.
  @usableFromInline let capacity: Int
  /// Whether a send to a full buffer drops the oldest element instead of waiting (`.conflated`,
  /// and the `.dropOldest` buffers of streams).
  @usableFromInline let isConflated: Bool

  /// The buffered elements. Its storage grows as it fills, up to `capacity` slots (doubling,
  /// from 4), and never shrinks while the channel is open: an empty channel of any capacity
  /// holds no storage, and one that has filled once keeps what it needed then, so that filling
  /// and draining it again allocates nothing. Cancelling frees it.
  @usableFromInline var buffer = RingBuffer<Element>()
  @usableFromInline var senders = RingBuffer<SendEntry<Element>>()
  @usableFromInline var receivers = RingBuffer<ReceiveEntry<Element>>()
  /// Withdrawn waiters left in `senders` / `receivers` (`ChannelQueue.swift`): the live
  /// entries are `count - tombstones`.
  @usableFromInline var senderTombstones = 0
  @usableFromInline var receiverTombstones = 0
  /// `receiveFuture` futures cancelled in the middle of `receivers` since its last compaction
  /// (`removeReceiver(future:)`); some may have been met, and dropped, since.
  @usableFromInline var cancelledFutures = 0
  @usableFromInline var phase = ChannelPhase.open
  /// Whether the `whenComplete` callbacks have run (cancelled, or closed and drained).
  @usableFromInline var isComplete = false
  @usableFromInline var completionCallbacks: [() -> Void] = []
  @usableFromInline var cancelCallbacks: [() -> Void] = []
  /// `ChannelOperation.readinessBit`s of the operations that may complete now, published by
  /// the channel (`CoChannel.readiness`) at the end of every locked operation. Invariant: the
  /// bit of an operation that would complete now is set. A bit is set wherever its operation
  /// becomes ready, and cleared only where it is seen not to be (a receive or send that would
  /// have to wait), so it can be stale only in the harmless direction ("may be ready").
  @usableFromInline var readiness: UInt8

  @inlinable init(capacity: Int, isConflated: Bool) {
    self.capacity = capacity
    self.isConflated = isConflated
    readiness = capacity > 0 || isConflated ? SendOperation<Element>.readinessBit : 0
  }

  // MARK: Readiness (may be optimistic: a waiting peer can turn out stale)

  /// Whether a receive by the wait of `waker` would complete now (with an element or an
  /// error). Waiters of that same wait (other cases of its `select`) are no partners.
  @inlinable func isReceiveReady(for waker: CoroutineWaker) -> Bool {
    phase != .open || !buffer.isEmpty
      || senders.hasPartner(for: waker, tombstones: senderTombstones)
  }

  /// Whether a send by the wait of `waker` would complete now (delivered, buffered, or refused
  /// with an error). Waiters of that same wait (other cases of its `select`) are no partners.
  @inlinable func isSendReady(for waker: CoroutineWaker) -> Bool {
    phase != .open || isConflated || buffer.count < capacity
      || receivers.hasPartner(for: waker, tombstones: receiverTombstones)
  }

  /// Whether a live sender waits (not counting tombstones).
  @inlinable var hasSenders: Bool { senders.count != senderTombstones }

  /// A receive may complete now: an element was buffered, a sender queued, or the channel
  /// closed.
  @inlinable mutating func receiveBecameReady() {
    readiness |= ReceiveOperation<Element>.readinessBit
  }

  /// A send may complete now: a slot opened, a receiver queued, or the channel closed.
  @inlinable mutating func sendBecameReady() { readiness |= SendOperation<Element>.readinessBit }

  /// Queues a receiver (a waiting coroutine, a callback, a future): sends become ready.
  @inlinable mutating func appendReceiver(_ entry: ReceiveEntry<Element>) {
    receivers.append(entry)
    sendBecameReady()
  }

  /// Queues a sender (a waiting coroutine, a future's value): receives become ready.
  @inlinable mutating func appendSender(_ entry: SendEntry<Element>) {
    senders.append(entry)
    receiveBecameReady()
  }

  /// Elements a receiver could get without waiting: buffered, plus those of waiting senders.
  @inlinable var count: Int { buffer.count + senders.count - senderTombstones }

  // MARK: Receiving

  /// A receive that does not wait: an element, an error, or `nil` when it would have to wait.
  @inlinable mutating func receiveNow(_ effects: inout ChannelEffects<Element>)
    -> Result<Element, CoChannelError>?
  {
    if phase == .canceled { return .failure(.canceled) }
    if let element = buffer.popFirst() {
      // A slot opened: the first waiting sender's element takes it (FIFO).
      if let refill = takeFromSender(&effects) {
        buffer.append(refill, growingAtMostTo: capacity)
      } else {
        sendBecameReady()
      }
      completeIfDrained(&effects)
      return .success(element)
    }
    if let element = takeFromSender(&effects) {
      completeIfDrained(&effects)
      return .success(element)
    }
    if phase == .closed {
      completeIfDrained(&effects)
      return .failure(.closed)
    }
    readiness &= ~ReceiveOperation<Element>.readinessBit
    return nil
  }

  /// Takes the element of the first live waiting sender, claiming and scheduling the wake of
  /// its coroutine; stale senders met on the way are dropped.
  @inlinable mutating func takeFromSender(_ effects: inout ChannelEffects<Element>) -> Element? {
    while let entry = senders.popFirst() {
      if let element = entry.complete(with: .success(()), tombstones: &senderTombstones, &effects) {
        return element
      }
    }
    return nil
  }

  // MARK: Sending

  /// A send that does not wait: `.success` when delivered or buffered, `.failure` when the
  /// channel refuses it, `nil` when it would have to wait. The element is consumed only on
  /// success.
  @inlinable mutating func sendNow(_ element: Element, _ effects: inout ChannelEffects<Element>)
    -> Result<Void, CoChannelError>?
  {
    switch phase {
    case .canceled: return .failure(.canceled)
    case .closed: return .failure(.closed)
    case .open: break
    }
    if !receivers.isEmpty, deliver(element, &effects) { return .success(()) }
    if isConflated {
      // Full: the oldest element makes room (`.conflated` holds one; a stream's `.dropOldest`
      // buffer, `capacity`).
      if buffer.count >= capacity, let old = buffer.popFirst() { effects.drop([old]) }
      buffer.append(element, growingAtMostTo: capacity)
      receiveBecameReady()
      return .success(())
    }
    if buffer.count < capacity {
      buffer.append(element, growingAtMostTo: capacity)
      receiveBecameReady()
      return .success(())
    }
    readiness &= ~SendOperation<Element>.readinessBit
    return nil
  }

  /// Gives `element` to the first live waiting receiver; false (element not consumed) if there
  /// is none. Stale receivers met on the way are dropped.
  @inlinable mutating func deliver(_ element: Element, _ effects: inout ChannelEffects<Element>)
    -> Bool
  {
    while let entry = receivers.popFirst() {
      if entry.complete(with: .success(element), tombstones: &receiverTombstones, &effects) {
        return true
      }
    }
    return false
  }

  /// Queues the value of a `sendFuture` future when it found no room.
  @inlinable mutating func enqueueElement(_ element: Element) { appendSender(.element(element)) }

  // MARK: Waiters leaving

  /// Takes the waiter of a cancelled `awaitReceive`, or of a losing receive case, out of
  /// `receivers` (see `RingBuffer.withdraw`): `false` if it left a tombstone there.
  @inlinable mutating func withdrawReceiver(_ waiter: ChannelWaiter<Element>) -> Bool {
    receivers.withdraw(waiter, tombstones: &receiverTombstones)
  }

  /// Takes the waiter of a cancelled `awaitSend`, or of a losing send case, out of `senders`:
  /// `false` if it left a tombstone there. Its element, not sent, is handed back, to be
  /// released once the lock is released.
  @inlinable mutating func withdrawSender(
    _ waiter: ChannelWaiter<Element>, _ effects: inout ChannelEffects<Element>
  ) -> (removed: Bool, element: Element?) {
    let element = waiter.element.take()
    let removed = senders.withdraw(waiter, tombstones: &senderTombstones)
    completeIfDrained(&effects)
    return (removed, element)
  }

  /// Takes a cancelled `receiveFuture` future out of the receivers, in O(1) amortized: at once
  /// at either end of the queue; elsewhere it stays (a receive skips a cancelled future, which
  /// refuses the claim) until more futures were cancelled there than half the queue holds, and
  /// one pass then drops every cancelled future and tombstone. So many futures cancelled in
  /// any order cost time linear in their number, and cancelled entries never outnumber the
  /// live ones for long.
  mutating func removeReceiver(future identity: ObjectIdentifier) {
    if case .future(let last)? = receivers.last, ObjectIdentifier(last) == identity {
      receivers.popLast()
      receivers.dropTrailingTombstones(&receiverTombstones)
      return
    }
    if case .future(let first)? = receivers.first, ObjectIdentifier(first) == identity {
      _ = receivers.popFirst()
      return
    }
    cancelledFutures += 1
    let isGone = { (entry: ReceiveEntry<Element>) -> Bool in
      if case .future(let future) = entry { return !future.cell.isPending }
      return entry.isTombstone
    }
    guard receivers.compact(ifMoreThanHalfGone: cancelledFutures + receiverTombstones, isGone)
    else { return }
    receiverTombstones = 0
    cancelledFutures = 0
  }

  // MARK: Close and cancel

  /// Closes an open channel: waiting receivers (there are some only when nothing is left to
  /// receive) fail with `closed`; waiting senders stay, their elements still to be received.
  mutating func close(_ effects: inout ChannelEffects<Element>) -> Bool {
    guard phase == .open else { return false }
    phase = .closed
    receiveBecameReady()
    sendBecameReady()
    if buffer.isEmpty {
      failReceivers(with: .closed, &effects)
    }
    completeIfDrained(&effects)
    return true
  }

  /// Cancels the channel: drops the buffer and every waiting element, fails every waiter with
  /// `canceled`, and makes the `whenCanceled` and (if not yet run) `whenComplete` callbacks due.
  mutating func cancel(_ effects: inout ChannelEffects<Element>) {
    guard phase != .canceled else { return }
    phase = .canceled
    receiveBecameReady()
    sendBecameReady()
    effects.drop(buffer.removeAll())
    buffer = RingBuffer()  // its storage too: a cancelled channel buffers nothing again
    failReceivers(with: .canceled, &effects)
    while let entry = senders.popFirst() {
      _ = entry.complete(with: .failure(.canceled), tombstones: &senderTombstones, &effects)
    }
    effects.addCallbacks(cancelCallbacks)
    cancelCallbacks = []
    if !isComplete {
      isComplete = true
      effects.addCallbacks(completionCallbacks)
      completionCallbacks = []
    }
  }

  private mutating func failReceivers(
    with error: CoChannelError, _ effects: inout ChannelEffects<Element>
  ) {
    while let entry = receivers.popFirst() {
      _ = entry.complete(with: .failure(error), tombstones: &receiverTombstones, &effects)
    }
  }

  /// A closed channel with nothing left to receive is complete: its `whenComplete` callbacks
  /// become due, once.
  @inlinable mutating func completeIfDrained(_ effects: inout ChannelEffects<Element>) {
    guard phase == .closed, !isComplete, buffer.isEmpty, !hasSenders else { return }
    isComplete = true
    effects.addCallbacks(completionCallbacks)
    completionCallbacks = []
  }
}
