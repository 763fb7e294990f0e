/// A channel whose every subscriber receives every element sent after it subscribed (Kotlin's
/// `SharedFlow` and `BroadcastChannel`, Combine's `PassthroughSubject`): one producer, any
/// number of consumers, each with a buffer of its own.
///
/// ```swift
/// let prices = BroadcastChannel<Double>(replay: 1)     // late subscribers get the last price
/// let chart = prices.subscribe()
/// let alerts = prices.subscribe(capacity: 1, policy: .dropOldest)
/// try prices.send(101.5)                               // both receive it
/// ```
///
/// - **Subscribers.** `subscribe()` returns a receiver with a buffer of `capacity` elements
///   (at least the replayed ones) and the channel's `policy` for a full buffer;
///   `subscribe(capacity:policy:)` chooses them per subscriber. A new subscriber first
///   receives the last `replay` elements sent (if the channel is closed, then its end).
/// - **Sending.** `send` hands the element to every subscriber, in one order for all of them
///   (sends take turns). A `.suspend` subscriber whose buffer is full holds the sender back
///   until it has room; `.dropOldest` and `.dropNewest` subscribers never do. Outside a
///   coroutine `send` never waits: it throws `CoroutineError.calledOutsideCoroutine`, before
///   any subscriber got the element, if it would have to (another send has the turn, or a
///   `.suspend` subscriber is full).
/// - **Ends.** `close()` lets every subscriber drain its buffer, then end with
///   `CoChannelError.closed`. Cancelling a subscription (or releasing its receiver) ends only
///   that subscription; the broadcast forgets it, so a gone subscriber never holds senders
///   back. Stages derived from a subscription treat it as shared: cancelling them ends the
///   subscription, nothing more.
///
/// Threading: every member may be called from any thread. `@unchecked Sendable`: the state is
/// inside a mutex; elements cross threads by design, as with `CoChannel`.
public final class BroadcastChannel<Element>: @unchecked Sendable {
  /// One subscription: its buffer, and what to do when it is full.
  @usableFromInline
  struct Subscriber {
    @usableFromInline let channel: CoChannel<Element>
    @usableFromInline let policy: StreamBufferPolicy
    @usableFromInline let capacity: Int

    @inlinable init(channel: CoChannel<Element>, policy: StreamBufferPolicy, capacity: Int) {
      self.channel = channel
      self.policy = policy
      self.capacity = capacity
    }
  }

  @usableFromInline
  struct State {
    @usableFromInline var subscribers: [Subscriber] = []
    /// The last `replay` elements sent.
    @usableFromInline var replayed = RingBuffer<Element>()
    @usableFromInline var isClosed = false

    @inlinable init() {}
  }

  // `send` is `@inlinable`, so that it runs specialized for the element type in the client
  // (a broadcast's cost is per element per subscriber: F3 in Benchmarks/README.md).
  @usableFromInline let state = InlineMutex(State())
  /// Sends take turns, so that all subscribers get the elements in the same order.
  @usableFromInline let turn = CoMutex()

  /// How many of the last elements sent a new subscriber receives first.
  public let replay: Int
  /// The buffer size of a subscriber made by `subscribe()`.
  public let capacity: Int
  /// What a subscriber made by `subscribe()` does when its buffer is full.
  public let policy: StreamBufferPolicy

  /// Creates a broadcast channel: new subscribers first receive the last `replay` elements;
  /// `subscribe()` gives them buffers of `capacity` elements with `policy`.
  ///
  /// - Precondition: `replay` is zero or more, `capacity` is 1 or more.
  public init(replay: Int = 0, capacity: Int = 64, policy: StreamBufferPolicy = .suspend) {
    precondition(replay >= 0, "BroadcastChannel(replay:) needs zero or more")
    precondition(capacity >= 1, "BroadcastChannel(capacity:) needs 1 or more")
    self.replay = replay
    self.capacity = capacity
    self.policy = policy
  }

  deinit {
    // Nobody can send any more: the subscribers end once they have drained their buffers.
    for subscriber in state.withCriticalSection({ $0.subscribers }) { subscriber.channel.close() }
  }

  /// Subscribes with the channel's `capacity` and `policy`: the receiver gets the replayed
  /// elements, then every element sent from now on.
  ///
  /// ```swift
  /// let updates = broadcast.subscribe()
  /// for update in updates.makeIterator() { apply(update) }   // in a coroutine
  /// ```
  public func subscribe() -> CoChannel<Element>.Receiver {
    subscribe(capacity: capacity, policy: policy)
  }

  /// Subscribes with a buffer of `capacity` elements (at least the replayed ones) and `policy`
  /// for a full buffer.
  ///
  /// - Precondition: `capacity` is 1 or more.
  public func subscribe(capacity: Int, policy: StreamBufferPolicy) -> CoChannel<Element>.Receiver {
    precondition(capacity >= 1, "BroadcastChannel.subscribe(capacity:policy:) needs 1 or more")
    let size = Swift.max(capacity, replay)
    let channel =
      policy == .dropOldest
      ? CoChannel<Element>(droppingOldestBeyond: size) : CoChannel<Element>(capacity: size)
    let isClosed = state.withCriticalSection { state -> Bool in
      // Under the lock, so that no element is both replayed and sent to it, or neither. Nobody
      // waits on the new channel yet: these offers run no callbacks.
      for offset in 0..<state.replayed.count {
        channel.offer(state.replayed.element(at: offset))
      }
      if !state.isClosed {
        state.subscribers.append(Subscriber(channel: channel, policy: policy, capacity: size))
      }
      return state.isClosed
    }
    if isClosed {
      channel.close()
    } else {
      // Forget the subscription once it ends (cancelled, or closed and drained).
      channel.whenComplete { [weak self, weak channel] in
        guard let self, let channel else { return }
        self.forget(channel)
      }
    }
    return CoChannel<Element>.Receiver(channel, source: SubscriptionReceiving(channel))
  }

  /// Sends `element` to every subscriber, suspending the calling coroutine while another send
  /// has the turn or a `.suspend` subscriber's buffer is full.
  ///
  /// - Throws: `CoChannelError.closed` if the channel is closed;
  ///   `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a coroutine
  ///   (no subscriber got the element); `CoroutineError.canceled` if the coroutine is cancelled
  ///   while waiting (for the turn: no subscriber got it; for a full subscriber: those before
  ///   it did).
  @inlinable
  public func send(_ element: Element) throws {
    try turn.lock()
    defer { turn.unlock() }
    let mayWait = CoroutineHandle.isInsideCoroutine
    let (targets, dropped) = try state.withCriticalSection {
      state throws -> ([Subscriber], Element?) in
      if state.isClosed { throw CoChannelError.closed }
      // Room can only grow while this send has the turn: checked, it stays.
      if !mayWait,
        state.subscribers.contains(where: {
          $0.policy == .suspend && $0.channel.count >= $0.capacity
        })
      {
        throw CoroutineError.calledOutsideCoroutine
      }
      state.replayed.append(element)
      let dropped = state.replayed.count > replay ? state.replayed.popFirst() : nil
      return (state.subscribers, dropped)
    }
    _ = dropped  // released here, outside the lock
    for subscriber in targets {
      switch subscriber.policy {
      case .suspend:
        do {
          try subscriber.channel.awaitSend(element)
        } catch is CoChannelError {
          continue  // the subscription ended meanwhile
        }
      case .dropOldest, .dropNewest:
        subscriber.channel.offer(element)
      }
    }
  }

  /// Closes the channel: subscribers receive what they have buffered, then
  /// `CoChannelError.closed`; later sends throw `closed`; later subscribers receive the
  /// replayed elements, then `closed`.
  ///
  /// - Returns: `true` if this call closed the channel; `false` if it was already closed.
  @discardableResult
  public func close() -> Bool {
    let subscribers = state.withCriticalSection { state -> [Subscriber]? in
      guard !state.isClosed else { return nil }
      state.isClosed = true
      defer { state.subscribers = [] }
      return state.subscribers
    }
    guard let subscribers else { return false }
    for subscriber in subscribers { subscriber.channel.close() }
    return true
  }

  /// Whether the channel was closed.
  public var isClosed: Bool { state.withCriticalSection { $0.isClosed } }

  /// The number of subscriptions that have not ended.
  public var subscriberCount: Int { state.withCriticalSection { $0.subscribers.count } }

  private func forget(_ channel: CoChannel<Element>) {
    let removed = state.withCriticalSection { state -> [Subscriber] in
      guard let index = state.subscribers.firstIndex(where: { $0.channel === channel }) else {
        return []
      }
      return [state.subscribers.remove(at: index)]
    }
    _ = removed  // released outside the lock
  }
}

/// The source of a subscription's receiver: the subscription's channel, which it cancels when
/// the receiver is released (so that a subscriber that is gone is forgotten, and never holds
/// the senders back). Receiving goes to the channel directly.
final class SubscriptionReceiving<Element>: ChannelReceiving, @unchecked Sendable {
  // `@unchecked Sendable`: an immutable reference to a thread-safe channel.
  let channel: CoChannel<Element>

  init(_ channel: CoChannel<Element>) { self.channel = channel }

  deinit { channel.cancel() }

  func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType {
    channel.receiverBufferType(as: T.self)
  }
  func awaitReceive() throws -> Element { try channel.awaitReceive() }
  func receiveFuture() -> CoFuture<Element> { channel.receiveFuture() }
  func poll() -> Element? { channel.poll() }
  func whenReceive(_ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void) {
    channel.whenReceive(callback)
  }
  var count: Int { channel.count }
  var isEmpty: Bool { channel.isEmpty }
  var isClosed: Bool { channel.isClosed }
  func cancel() { channel.cancel() }
  var isCanceled: Bool { channel.isCanceled }
  func whenCanceled(_ callback: @escaping @Sendable () -> Void) { channel.whenCanceled(callback) }
  func whenComplete(_ callback: @escaping () -> Void) { channel.whenComplete(callback) }
  func receiveNow() -> Result<Element, CoChannelError>? { channel.receiveNow() }
  func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Element, Output>
  ) {
    channel.initializeSelectSlot(slot, body)
  }
}
