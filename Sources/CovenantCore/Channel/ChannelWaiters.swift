/// A suspended coroutine's place in a channel queue: one `awaitSend`/`awaitReceive`, or one case
/// of a `select` (all cases of a select share the same waker, so only one of them can win).
///
/// Protocol: whoever completes the wait first wins `waker.claim()` **under the channel lock**,
/// then writes `element`/`error` and sets `isDone`, and calls `waker.wake()` after unlocking. A
/// failed claim means someone else (another case, a timer, a cancel) won: the waiter is stale
/// and is dropped without being given anything (`isDropped`).
///
/// Once the wait is over, the coroutine withdraws a waiter nobody completed
/// (`ChannelState.withdrawReceiver` / `withdrawSender`): out of its queue at once if it is at
/// either end, else left in place as a *tombstone* (`currentWaker` set to `nil`) that the
/// queue drops when it meets it or compacts away — so that many waiters leaving a long queue
/// cost O(1) each, not O(queue).
///
/// `@unchecked Sendable`: the fields are written by the claim winner only, before `wake()`, and
/// read by the coroutine only after it has been woken; the wait-state atomics order the two.
/// For the same reason two accesses never overlap, so the fields skip Swift's dynamic
/// exclusivity checks (`@exclusivity(unchecked)`), which would cost more than the hand-off.
@usableFromInline
final class ChannelWaiter<Element>: @unchecked Sendable {
  /// `nil` while the waiter sits unused in a channel's spare slot, and while it stays in a queue
  /// as a tombstone (so that it does not keep a finished coroutine, and its stack, alive; and
  /// so that nobody can claim it).
  @usableFromInline @exclusivity(unchecked) var currentWaker: CoroutineWaker?
  /// For a sender: the element to send (taken by the receiver). For a receiver: what it got.
  @usableFromInline @exclusivity(unchecked) var element: Element?
  /// Set instead of `element` when the channel was closed or cancelled.
  @usableFromInline @exclusivity(unchecked) var error: CoChannelError?
  /// Whether the claim winner has completed this wait (false after a stale or own-claim retry).
  @usableFromInline @exclusivity(unchecked) var isDone = false
  /// Whether a peer met the waiter with its wait already claimed (by another case, a timer or a
  /// cancel) and dropped it from its queue: withdrawing it then has nothing to take out. Only
  /// touched under the channel lock.
  @usableFromInline @exclusivity(unchecked) var isDropped = false

  @inlinable init(waker: CoroutineWaker, element: Element? = nil) {
    currentWaker = waker
    self.element = element
  }

  /// Makes a recycled waiter wait for `waker`, as if new.
  @inlinable func reuse(waker: CoroutineWaker, element: Element?) {
    assert(currentWaker == nil, "a waiter is reused once its wait was cleared")
    currentWaker = waker
    self.element = element
    error = nil
    isDone = false
    isDropped = false
  }

  /// Wins the wait this waiter stands for (under the channel lock): its waker, to wake once
  /// the lock is released, or `nil` if someone else won it first or it is a tombstone (the
  /// waiter is stale).
  @inlinable func claim() -> CoroutineWaker? {
    guard let waker = currentWaker, waker.claim() else { return nil }
    return waker
  }

  /// Notes that this waiter, just popped from the front of its queue with its claim failed,
  /// has left the queue: one tombstone fewer in it, or a waiter whose withdrawal will have
  /// nothing to take out. Under the channel lock.
  @inlinable func dropped(tombstones: inout Int) {
    if currentWaker == nil {
      assert(tombstones > 0, "a queue counts the tombstones it holds")
      tombstones -= 1
    } else {
      isDropped = true
    }
  }

  /// Completes the wait this waiter stands for, under the channel lock: wins its claim, lets
  /// `write` store the outcome (an element, an error), marks the wait done and has the coroutine
  /// woken once the lock is released. Returns false, having written nothing, when the waiter is
  /// stale (see `dropped(tombstones:)`); `tombstones` counts its queue's tombstones.
  @inlinable func complete(
    tombstones: inout Int, _ effects: inout ChannelEffects<Element>,
    writing write: (ChannelWaiter) -> Void
  ) -> Bool {
    guard let waker = claim() else {
      dropped(tombstones: &tombstones)
      return false
    }
    assert(!isDone, "a channel waiter is completed once per wait")
    write(self)
    isDone = true
    effects.resume(waker)
    return true
  }

  /// Stores the outcome of a receive: the element, or the error of a closed or cancelled
  /// channel.
  @inlinable func store(received outcome: Result<Element, CoChannelError>) {
    switch outcome {
    case .success(let element): self.element = element
    case .failure(let error): self.error = error
    }
  }

  /// Drops what the finished wait held, before the waiter is kept for reuse.
  @inlinable func clear() {
    currentWaker = nil
    element = nil
  }

  /// The outcome of a completed receive.
  @inlinable var receiveResult: Result<Element, CoChannelError> {
    if let error { return .failure(error) }
    return .success(element!)
  }
}

extension CoroutineWaker {
  /// Whether `other` resumes the same await of the same coroutine.
  @usableFromInline func isSameWait(as other: CoroutineWaker) -> Bool {
    coroutine === other.coroutine && generation == other.generation
  }
}

/// An entry of a channel's waiting queue: a coroutine's waiter, or something else that waits
/// (a callback, a future, a future's element).
@usableFromInline
protocol ChannelQueueEntry<Element> {
  associatedtype Element
  /// The coroutine waiter this entry stands for, if it is one.
  var waiter: ChannelWaiter<Element>? { get }
}

extension ChannelQueueEntry {
  /// Whether the entry is a withdrawn waiter left in place (`RingBuffer.withdraw`): a waiter
  /// without a waker. No other kind of entry is one.
  @inlinable var isTombstone: Bool {
    guard let waiter else { return false }
    return waiter.currentWaker == nil
  }
}

/// Someone waiting to receive, in FIFO order.
@usableFromInline
enum ReceiveEntry<Element>: ChannelQueueEntry {
  /// A coroutine in `awaitReceive` or a `select` receive case.
  case waiter(ChannelWaiter<Element>)
  /// A `whenReceive` callback.
  case callback(@Sendable (Result<Element, CoChannelError>) -> Void)
  /// A `receiveFuture` future; completing its cell is its claim.
  case future(CoFuture<Element>)

  @inlinable var waiter: ChannelWaiter<Element>? {
    if case .waiter(let waiter) = self { return waiter }
    return nil
  }
}

extension ReceiveEntry {
  /// Completes this receiver with `outcome`, under the channel lock: a waiter gets it when its
  /// claim succeeds (and is woken after the lock), a callback is called with it after the lock,
  /// a future is resolved with it unless it was cancelled. Returns false when the entry was
  /// stale (a waiter whose wait someone else won, a cancelled future) and got nothing: the
  /// outcome is then still to be given to the next receiver. Every path that completes
  /// receivers goes through here.
  @inlinable func complete(
    with outcome: Result<Element, CoChannelError>, tombstones: inout Int,
    _ effects: inout ChannelEffects<Element>
  ) -> Bool {
    switch self {
    case .waiter(let waiter):
      return waiter.complete(tombstones: &tombstones, &effects) { $0.store(received: outcome) }
    case .callback(let callback):
      effects.add(.callback(callback, outcome))
      return true
    case .future(let future):
      // Completing the cell is the claim: a cancelled future refuses it.
      let result = outcome.mapError { $0 as any Error }
      guard let observers = future.claimResolution(result) else { return false }
      effects.add(.observers(observers, result))
      return true
    }
  }
}

/// Someone waiting to send, in FIFO order.
@usableFromInline
enum SendEntry<Element>: ChannelQueueEntry {
  /// A coroutine in `awaitSend` or a `select` send case (the element is in the waiter).
  case waiter(ChannelWaiter<Element>)
  /// The value of a `sendFuture` future that found no room; nobody waits for it.
  case element(Element)

  @inlinable var waiter: ChannelWaiter<Element>? {
    if case .waiter(let waiter) = self { return waiter }
    return nil
  }
}

extension SendEntry {
  /// Completes this sender, under the channel lock. `.success`: its element is taken and
  /// returned (a waiter's coroutine is woken after the lock). `.failure`: the send is refused
  /// with that error (a waiter gets the error; a `sendFuture`'s queued element is dropped after
  /// the lock); returns nil. Also nil, with nothing taken, for a stale waiter (someone else won
  /// its wait). Every path that completes senders goes through here.
  @inlinable func complete(
    with outcome: Result<Void, CoChannelError>, tombstones: inout Int,
    _ effects: inout ChannelEffects<Element>
  ) -> Element? {
    switch (self, outcome) {
    case (.waiter(let waiter), .success):
      var element: Element?
      _ = waiter.complete(tombstones: &tombstones, &effects) { element = $0.element.take() }
      return element
    case (.waiter(let waiter), .failure(let error)):
      _ = waiter.complete(tombstones: &tombstones, &effects) { $0.error = error }
      return nil
    case (.element(let element), .success):
      return element
    case (.element(let element), .failure):
      effects.drop([element])
      return nil
    }
  }
}

/// One thing to do after the channel lock is released: resume a coroutine, call a callback or
/// run a future's observers.
@usableFromInline
enum ChannelWake<Element> {
  case waker(CoroutineWaker)
  case callback(
    @Sendable (Result<Element, CoChannelError>) -> Void, Result<Element, CoChannelError>)
  case observers(ObserverList<Element>, Result<Element, any Error>)

  @inlinable func run() {
    switch self {
    case .waker(let waker): waker.wake()
    case .callback(let callback, let result): callback(result)
    case .observers(let observers, let result): observers.notify(result)
    }
  }
}

/// What a locked channel operation leaves to do once the lock is released.
///
/// The common case — at most one coroutine to resume — is a plain optional, with nothing to
/// allocate, retain or destroy generically; anything else (callbacks, future observers, several
/// wakes, dropped elements) goes into `ChannelMoreEffects`, allocated only when needed.
@usableFromInline
struct ChannelEffects<Element>: Sendable {
  @usableFromInline var resumer: CoroutineWaker?
  @usableFromInline var more: ChannelMoreEffects<Element>?

  @inlinable init() {}

  /// Resumes `resumer` (already claimed) after unlocking.
  @inlinable mutating func resume(_ resumer: CoroutineWaker) {
    assert(resumer.isClaimed, "a coroutine is resumed only by the winner of its claim")
    if self.resumer == nil {
      self.resumer = resumer
    } else {
      moreEffects.wakes.append(.waker(resumer))
    }
  }

  @inlinable mutating func add(_ wake: ChannelWake<Element>) {
    if case .waker(let resumer) = wake, self.resumer == nil {
      self.resumer = resumer
    } else {
      moreEffects.wakes.append(wake)
    }
  }

  /// Callbacks (`whenCanceled`, `whenComplete`) that became due.
  @inlinable mutating func addCallbacks(_ callbacks: [() -> Void]) {
    guard !callbacks.isEmpty else { return }
    moreEffects.callbacks.append(contentsOf: callbacks)
  }

  /// Elements dropped by a cancel or a conflated overwrite, released outside the lock.
  @inlinable mutating func drop(_ elements: [Element]) {
    guard !elements.isEmpty else { return }
    moreEffects.dropped.append(contentsOf: elements)
  }

  @inlinable var moreEffects: ChannelMoreEffects<Element> {
    mutating get {
      if let more { return more }
      let created = ChannelMoreEffects<Element>()
      more = created
      return created
    }
  }

  /// Runs everything, in order. Call with no lock held.
  @inlinable func run() {
    resumer?.wake()
    more?.run()
  }
}

/// The uncommon part of `ChannelEffects`. `@unchecked Sendable`: filled under the channel lock,
/// then run by the same thread after unlocking.
@usableFromInline
final class ChannelMoreEffects<Element>: @unchecked Sendable {
  @usableFromInline var wakes: [ChannelWake<Element>] = []
  @usableFromInline var callbacks: [() -> Void] = []
  @usableFromInline var dropped: [Element] = []

  @inlinable init() {}

  @inlinable func run() {
    for wake in wakes { wake.run() }
    for callback in callbacks { callback() }
    dropped = []
  }
}
