/// The source of a receiver whose stage needs an activity of its own, because elements must be
/// taken from upstream, or time must pass, while nobody is receiving: `CoChannel.merge`,
/// `zip`, `combineLatest`, `buffer`, `conflated`, `flatMapMerge`, `flatMapLatest`,
/// `timeout`, `debounce`, `throttle`, `chunked(byCount:orWithin:)`.
///
/// The stage is a loop (`body`) in a coroutine of its own, the *pump*, which receives from
/// upstream (with `select`, and the select's timers) and sends to `outlet`, the channel its
/// consumers receive from: rendezvous unless the stage is a buffer, so a pump holds at most
/// the element it is handing over. Consumers get every receive operation of a channel.
///
/// - **Where it runs.** The pump starts the first time the receiver is used, on the scheduler
///   of the coroutine using it (so its timers are that scheduler's: virtual time on a
///   `TestScheduler`, the event loop's on an event loop); from outside any coroutine, on the
///   thread using it, continuing wherever it is woken, with the default timers.
/// - **Ends.** The body returns when the stream is over (upstream closed): the outlet closes.
///   It throws the `CoChannelError` that ends the stream otherwise: `.canceled` cancels the
///   outlet and every upstream (an upstream cancelled fails the whole stream, as an error does
///   in Kotlin Flow and swift-async-algorithms); `.timeout` is delivered after the buffered
///   elements, and cancels the upstreams.
/// - **Cancellation.** `cancel()` cancels the outlet, stops the pump and cancels the upstreams
///   (each of which, if shared, ends only itself). Releasing the receiver stops the pump too,
///   but leaves the upstreams as they are; an element the pump had taken is dropped with it.
@usableFromInline
final class PumpReceiving<Element>: ChannelReceiving, @unchecked Sendable {
  // `@unchecked Sendable`: immutable references to thread-safe objects, and an atomic flag.
  @usableFromInline let outlet: StreamOutlet<Element>
  @usableFromInline let undelivered = UndeliveredOutcomes<Element>()
  /// The pump coroutine's scope: cancelling it stops the pump.
  let scope = CoScope()
  @usableFromInline let started = InlineAtomic<Bool>(false)
  /// The pump's name in coroutine snapshots (`"Covenant.debounce"`).
  let name: String
  /// The receivers the stage consumes, cancelled with it.
  let upstreams: [any CoCancellable & Sendable]
  /// The stage's loop (see above); run once, by the pump.
  let body: @Sendable (StreamOutlet<Element>) throws -> Void

  @usableFromInline
  init(
    name: String, outlet: CoChannel<Element>, upstreams: [any CoCancellable & Sendable],
    body: @escaping @Sendable (StreamOutlet<Element>) throws -> Void
  ) {
    self.outlet = StreamOutlet(outlet)
    self.name = name
    self.upstreams = upstreams
    self.body = body
  }

  deinit {
    // Nobody can receive any more: stop the pump (its upstreams stay as they are).
    scope.cancel()
    outlet.channel.cancel()
  }

  /// Starts the pump if it has not started yet.
  @inlinable func startIfNeeded() {
    if !started.load(ordering: .relaxed) { start() }
  }

  @usableFromInline func start() {
    guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let scheduler: any CoroutineScheduler =
      CoroutineContext.current?.scheduler
      ?? ImmediateScheduler()
    let outlet = outlet
    let body = body
    let upstreams = upstreams
    scheduler.startCoroutine(
      in: scope, name: name, stack: .automatic, file: #fileID, line: #line
    ) {
      do {
        try body(outlet)
        outlet.finish(.closed)
      } catch let error as CoChannelError {
        outlet.finish(error)
        if error != .closed { for upstream in upstreams { upstream.cancel() } }
      } catch {
        // Stopped (`CoroutineError.canceled`): by `cancel()`, which cancels the upstreams
        // itself, or by the receiver's release, which leaves them.
        outlet.channel.cancel()
      }
    }
  }

  // MARK: Receiving

  @inlinable
  func awaitReceive() throws -> Element {
    startIfNeeded()
    if !undelivered.isEmpty, let outcome = undelivered.take() { return try outcome.get() }
    do {
      return try outlet.channel.awaitReceive()
    } catch let error as CoChannelError {
      throw outlet.ending(error)
    }
  }

  @inlinable
  func receiveNow() -> Result<Element, CoChannelError>? {
    startIfNeeded()
    if !undelivered.isEmpty, let outcome = undelivered.take() { return outcome }
    return outlet.channel.performNow(ReceiveOperation()).map { $0.mapError(outlet.ending) }
  }

  @inlinable
  func poll() -> Element? {
    startIfNeeded()
    if !undelivered.isEmpty, case .success(let element)? = undelivered.take() { return element }
    return outlet.channel.poll()
  }

  @usableFromInline func whenReceive(
    _ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void
  ) {
    if let ready = receiveNow() { return callback(ready) }
    let outlet = outlet
    outlet.channel.whenReceive { callback($0.mapError(outlet.ending)) }
  }

  @usableFromInline func receiveFuture() -> CoFuture<Element> {
    if let ready = receiveNow() { return CoFuture(result: ready.mapError { $0 }) }
    let promise = CoPromise<Element>()
    let upstream = outlet.channel.receiveFuture()
    promise.cancelsParent(upstream)
    let outlet = outlet
    let undelivered = undelivered
    upstream.whenResolved { result in
      switch result {
      case .success(let element): promise.complete(with: .success(element), keepingIn: undelivered)
      case .failure(let error as CoChannelError):
        promise.complete(with: .failure(outlet.ending(error)), keepingIn: undelivered)
      case .failure: return  // cancelled with `promise`
      }
    }
    return promise
  }

  @usableFromInline func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Element, Output>
  ) {
    startIfNeeded()
    let outlet = outlet
    outlet.channel.initializeSelectSlot(
      slot, .result { try body.run(with: $0.mapError(outlet.ending)) })
  }

  @usableFromInline var holdsReadyOutcome: Bool { !undelivered.isEmpty }

  // MARK: State

  @usableFromInline func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType {
    outlet.channel.receiverBufferType(as: T.self)
  }

  @usableFromInline var count: Int { undelivered.elementCount + outlet.channel.count }

  @usableFromInline var isEmpty: Bool { count == 0 }

  @usableFromInline var isClosed: Bool { outlet.channel.isClosed }

  @usableFromInline func cancel() {
    undelivered.removeAll()
    outlet.channel.cancel()
    scope.cancel()
    for upstream in upstreams { upstream.cancel() }
  }

  @usableFromInline var isCanceled: Bool { outlet.channel.isCanceled }

  @usableFromInline func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
    outlet.channel.whenCanceled(callback)
  }

  @usableFromInline func whenComplete(_ callback: @escaping () -> Void) {
    outlet.channel.whenComplete(callback)
  }
}

extension CoChannel.Receiver {
  /// A receiver of the pump `source` (see `PumpReceiving`).
  @inlinable
  convenience init(pump source: PumpReceiving<Element>) {
    self.init(
      receive: { try source.awaitReceive() }, poll: { source.poll() }, source: source)
  }

  /// A receiver whose stage runs `body` in a pump of its own (see `PumpReceiving`), sending to
  /// `outlet` (rendezvous unless given), consuming `upstreams`.
  @inlinable
  convenience init(
    pumpNamed name: String, outlet: CoChannel<Element> = CoChannel(bufferType: .none),
    consuming upstreams: [any CoCancellable & Sendable],
    _ body: @escaping @Sendable (StreamOutlet<Element>) throws -> Void
  ) {
    self.init(pump: PumpReceiving(name: name, outlet: outlet, upstreams: upstreams, body: body))
  }
}
