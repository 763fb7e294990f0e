/// A suspended coroutine's place in a channel queue: one `awaitSend`/`awaitReceive`, or one case
/// of a `select` (all cases of a select share the same waker, so only one of them can win).
///
/// Protocol: whoever completes the wait first wins `waker.claim()` **under the channel lock**,
/// then writes `element`/`error` and sets `isDone`, and calls `waker.wake()` after unlocking. A
/// failed claim means someone else (another case, a timer, a cancel) won: the waiter is stale
/// and is dropped without being given anything.
///
/// `@unchecked Sendable`: the fields are written by the claim winner only, before `wake()`, and
/// read by the coroutine only after it has been woken; the wait-state atomics order the two.
final class ChannelWaiter<Element>: @unchecked Sendable {
  let waker: CoroutineWaker
  /// For a sender: the element to send (taken by the receiver). For a receiver: what it got.
  var element: Element?
  /// Set instead of `element` when the channel was closed or cancelled.
  var error: CoChannelError?
  /// Whether the claim winner has completed this wait (false after a stale or own-claim retry).
  var isDone = false

  init(waker: CoroutineWaker, element: Element? = nil) {
    self.waker = waker
    self.element = element
  }

  /// The outcome of a completed receive.
  var receiveResult: Result<Element, CoChannelError> {
    if let error { return .failure(error) }
    return .success(element!)
  }
}

/// Someone waiting to receive, in FIFO order.
enum ReceiveEntry<Element> {
  /// A coroutine in `awaitReceive` or a `select` receive case.
  case waiter(ChannelWaiter<Element>)
  /// A `whenReceive` callback.
  case callback(@Sendable (Result<Element, CoChannelError>) -> Void)
  /// A `receiveFuture` future; completing its cell is its claim.
  case future(CoFuture<Element>)
}

/// Someone waiting to send, in FIFO order.
enum SendEntry<Element> {
  /// A coroutine in `awaitSend` or a `select` send case (the element is in the waiter).
  case waiter(ChannelWaiter<Element>)
  /// The value of a `sendFuture` future that found no room; nobody waits for it.
  case element(Element)
}

/// One thing to do after the channel lock is released: resume a coroutine, call a callback or
/// run a future's observers.
enum ChannelWake<Element> {
  case waker(CoroutineWaker)
  case callback(@Sendable (Result<Element, CoChannelError>) -> Void, Result<Element, CoChannelError>)
  case observers(ObserverList<Element>, Result<Element, any Error>)

  func run() {
    switch self {
    case .waker(let waker): waker.wake()
    case .callback(let callback, let result): callback(result)
    case .observers(let observers, let result): observers.notify(result)
    }
  }
}

/// What a locked channel operation leaves to do once the lock is released. Without allocation
/// for the common case of at most one wake.
struct ChannelEffects<Element>: @unchecked Sendable {
  var wake: ChannelWake<Element>?
  var moreWakes: [ChannelWake<Element>] = []
  /// `whenCanceled` / `whenComplete` callbacks that became due.
  var callbacks: [() -> Void] = []
  /// Elements dropped by a cancel or a conflated overwrite, released outside the lock.
  var dropped: [Element] = []

  init() {}

  mutating func add(_ wake: ChannelWake<Element>) {
    if self.wake == nil { self.wake = wake } else { moreWakes.append(wake) }
  }

  /// Runs everything, in order. Call with no lock held.
  func run() {
    wake?.run()
    for wake in moreWakes { wake.run() }
    for callback in callbacks { callback() }
  }
}
