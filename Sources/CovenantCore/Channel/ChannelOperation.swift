/// One channel operation a coroutine can wait for: a receive or a send. `awaitReceive`,
/// `awaitSend` and every case of a `select` go through the same steps with it
/// (`ChannelState.enqueueOrPerform`, `CoChannel.wait(for:)`), so the claim / wake / cancel
/// protocol of a channel wait is written once.
@usableFromInline
protocol ChannelOperation<Element> {
  associatedtype Element
  /// What a completed operation gives: the element received, or nothing (`Void`) for a send.
  /// Its outcome is `Result<Value, CoChannelError>`: the error when the channel is closed or
  /// cancelled.
  associatedtype Value

  /// This kind of operation's bit in `CoChannel.readiness`.
  static var readinessBit: UInt8 { get }

  /// What a coroutine waiting for this operation waits for, in coroutine snapshots.
  static var waitKind: CoroutineWaitKind { get }

  /// The element a waiting sender carries (`nil` for a receive).
  var carriedElement: Element? { get }

  /// Whether the operation, by the wait of `waker`, would complete now (optimistic: a waiting
  /// peer may be stale). Waiters of that same wait (other cases of its `select`) are no peers.
  func isReady(in state: inout ChannelState<Element>, for waker: CoroutineWaker) -> Bool

  /// Performs the operation without waiting; `nil` if it would have to wait.
  func performNow(
    in state: inout ChannelState<Element>, _ effects: inout ChannelEffects<Element>
  ) -> Result<Value, CoChannelError>?

  /// Puts `waiter` in line, in the queue this operation waits in.
  func enqueue(_ waiter: ChannelWaiter<Element>, in state: inout ChannelState<Element>)

  /// Takes `waiter` (queued by `enqueue`, its wait over, completed by nobody) out of its queue:
  /// whether it may be reused (`false`: it stays there as a tombstone), and an element it held
  /// that was not sent, to be released once the lock is released.
  func withdraw(
    _ waiter: ChannelWaiter<Element>, from state: inout ChannelState<Element>,
    _ effects: inout ChannelEffects<Element>
  ) -> (reusable: Bool, unsent: Element?)

  /// Leaves `outcome` in `waiter`, as a peer completing the wait would, and marks it done.
  func store(_ outcome: Result<Value, CoChannelError>, in waiter: ChannelWaiter<Element>)

  /// The outcome a claim winner left in `waiter` (only once `waiter.isDone`).
  func outcome(of waiter: ChannelWaiter<Element>) -> Result<Value, CoChannelError>
}

/// `awaitReceive` and receive cases.
@usableFromInline
struct ReceiveOperation<Element>: ChannelOperation {
  @inlinable init() {}

  @inlinable static var readinessBit: UInt8 { 1 }

  @inlinable static var waitKind: CoroutineWaitKind { .channelReceive }

  @inlinable var carriedElement: Element? { nil }

  @inlinable func isReady(in state: inout ChannelState<Element>, for waker: CoroutineWaker) -> Bool
  {
    state.isReceiveReady(for: waker)
  }

  @inlinable func performNow(
    in state: inout ChannelState<Element>, _ effects: inout ChannelEffects<Element>
  ) -> Result<Element, CoChannelError>? {
    state.receiveNow(&effects)
  }

  @inlinable func enqueue(_ waiter: ChannelWaiter<Element>, in state: inout ChannelState<Element>) {
    state.appendReceiver(.waiter(waiter))
  }

  @inlinable func withdraw(
    _ waiter: ChannelWaiter<Element>, from state: inout ChannelState<Element>,
    _ effects: inout ChannelEffects<Element>
  ) -> (reusable: Bool, unsent: Element?) {
    (state.withdrawReceiver(waiter), nil)
  }

  @inlinable func store(
    _ outcome: Result<Element, CoChannelError>, in waiter: ChannelWaiter<Element>
  ) {
    waiter.store(received: outcome)
    waiter.isDone = true
  }

  @inlinable func outcome(of waiter: ChannelWaiter<Element>) -> Result<Element, CoChannelError> {
    waiter.receiveResult
  }
}

/// `awaitSend` and send cases.
@usableFromInline
struct SendOperation<Element>: ChannelOperation {
  @usableFromInline let element: Element

  @inlinable init(_ element: Element) { self.element = element }

  @inlinable static var readinessBit: UInt8 { 2 }

  @inlinable static var waitKind: CoroutineWaitKind { .channelSend }

  @inlinable var carriedElement: Element? { element }

  @inlinable func isReady(in state: inout ChannelState<Element>, for waker: CoroutineWaker) -> Bool
  {
    state.isSendReady(for: waker)
  }

  @inlinable func performNow(
    in state: inout ChannelState<Element>, _ effects: inout ChannelEffects<Element>
  ) -> Result<Void, CoChannelError>? {
    state.sendNow(element, &effects)
  }

  @inlinable func enqueue(_ waiter: ChannelWaiter<Element>, in state: inout ChannelState<Element>) {
    state.appendSender(.waiter(waiter))
  }

  @inlinable func withdraw(
    _ waiter: ChannelWaiter<Element>, from state: inout ChannelState<Element>,
    _ effects: inout ChannelEffects<Element>
  ) -> (reusable: Bool, unsent: Element?) {
    let (removed, element) = state.withdrawSender(waiter, &effects)
    return (removed, element)
  }

  @inlinable func store(_ outcome: Result<Void, CoChannelError>, in waiter: ChannelWaiter<Element>)
  {
    if case .failure(let error) = outcome { waiter.error = error }
    waiter.isDone = true
  }

  @inlinable func outcome(of waiter: ChannelWaiter<Element>) -> Result<Void, CoChannelError> {
    if let error = waiter.error { return .failure(error) }
    return .success(())
  }
}
