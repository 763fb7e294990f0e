/// What a view stage makes of one outcome of its upstream.
@usableFromInline
enum StageOutcome<Output> {
  /// An element for the consumer.
  case element(Output)
  /// Nothing for the consumer (a `filter` rejected the element): receive again.
  case skip
  /// The stream is over: this receive, and every later one, fails with this error.
  case end(CoChannelError)
}

extension StageOutcome {
  /// The outcome as a receive's result, for a stage that never drops an element (`skip` does
  /// not happen there; it would read as the stream's end).
  @usableFromInline var result: Result<Output, CoChannelError> {
    switch self {
    case .element(let output): return .success(output)
    case .end(let error): return .failure(error)
    case .skip: return .failure(.canceled)
    }
  }
}

/// The source of a receiver whose stage runs inside the consumer's own receive (`map`,
/// `filter`, `compactMap`, `removeDuplicates`, `reductions`, `prefix`, `drop(while:)`,
/// `chunked(byCount:)`): each receive takes one outcome from `base` at a time, in whatever way
/// the consumer receives (a coroutine's wait, a poll, a callback, a future, a `select` case),
/// and `process` turns it into an outcome of its own. Nothing runs between receives, and
/// nothing is allocated per element on the waiting paths a coroutine takes.
///
/// The conforming classes give `process`, `decidedEnd` and the lifecycle members; everything
/// else is here, once.
@usableFromInline
protocol ViewReceiving: ChannelReceiving {
  associatedtype Input
  /// The receiver the stage reads.
  var base: CoChannel<Input>.Receiver { get }
  /// Elements received but not handed over (see `UndeliveredOutcomes`).
  var undelivered: UndeliveredOutcomes<Element> { get }
  /// The end the stream has reached without `base` (a `prefix` that has had its count), if
  /// any: receives then fail with it without receiving from `base`.
  var decidedEnd: CoChannelError? { get }
  /// What the stage makes of one outcome of `base` (for a stage with state, under its lock).
  func process(_ upstream: Result<Input, CoChannelError>) -> StageOutcome<Element>
  /// `process` as a function that holds neither this source nor `base`, for a stage that
  /// never drops an element and keeps no state (`map`); `nil` otherwise. A pending callback or
  /// future of such a stage then does not keep its upstream alive: a channel nobody else holds
  /// is released, and cancels it, as it cancels its own pending futures.
  var detachedProcess: (@Sendable (Result<Input, CoChannelError>) -> StageOutcome<Element>)? {
    get
  }
}

extension ViewReceiving {
  @inlinable
  func awaitReceive() throws -> Element {
    if !undelivered.isEmpty, let outcome = undelivered.take() { return try outcome.get() }
    while true {
      if let end = decidedEnd { throw end }
      let upstream: Result<Input, CoChannelError>
      do {
        upstream = .success(try base.awaitReceive())
      } catch let error as CoChannelError {
        upstream = .failure(error)
      }
      // Any other error (the coroutine was cancelled) consumed nothing: it goes through.
      switch process(upstream) {
      case .element(let output): return output
      case .skip: continue
      case .end(let error): throw error
      }
    }
  }

  @inlinable
  func receiveNow() -> Result<Element, CoChannelError>? {
    if !undelivered.isEmpty, let outcome = undelivered.take() { return outcome }
    while true {
      if let end = decidedEnd { return .failure(end) }
      guard let upstream = base.receiveNow() else { return nil }
      switch process(upstream) {
      case .element(let output): return .success(output)
      case .skip: continue
      case .end(let error): return .failure(error)
      }
    }
  }

  @inlinable
  func poll() -> Element? {
    if case .success(let element) = receiveNow() { return element }
    return nil
  }

  @usableFromInline var detachedProcess:
    (@Sendable (Result<Input, CoChannelError>) -> StageOutcome<Element>)?
  { nil }

  @usableFromInline func whenReceive(
    _ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void
  ) {
    if let ready = receiveNow() { return callback(ready) }
    if let process = detachedProcess {
      base.whenReceive { callback(process($0).result) }
      return
    }
    // A stage that may drop the element takes its next turn through this source: the
    // callback holds it (and so its upstream) until it runs.
    base.whenReceive { [self] upstream in
      switch process(upstream) {
      case .element(let output): callback(.success(output))
      case .end(let error): callback(.failure(error))
      // Dropped: take the next turn (what is ready is taken there without recursion).
      case .skip: whenReceive(callback)
      }
    }
  }

  @usableFromInline func receiveFuture() -> CoFuture<Element> {
    if let ready = receiveNow() { return CoFuture(result: ready.mapError { $0 }) }
    let promise = CoPromise<Element>()
    let pending = PendingFuture<Input>()
    promise.whenResolved { result in
      if result.isCoFutureCancellation { pending.cancel() }
    }
    receiveUpstream(into: promise, pending)
    return promise
  }

  /// Completes `promise` with the next outcome, through futures of `base` (the one pending is
  /// in `pending`, so that cancelling `promise` cancels it and gives up its turn).
  private func receiveUpstream(into promise: CoPromise<Element>, _ pending: PendingFuture<Input>) {
    let upstream = base.receiveFuture()
    guard pending.hold(upstream) else { return }
    if let process = detachedProcess {
      let undelivered = undelivered
      upstream.whenResolved { result in
        switch result {
        case .success(let element):
          promise.complete(with: process(.success(element)).result, keepingIn: undelivered)
        case .failure(let error as CoChannelError):
          promise.complete(with: process(.failure(error)).result, keepingIn: undelivered)
        case .failure: return  // cancelled with `promise`
        }
      }
      return
    }
    // A stage that may drop the element receives again through this source: the observer
    // holds it (and so its upstream) until the future completes.
    upstream.whenResolved { [self] result in
      let input: Result<Input, CoChannelError>
      switch result {
      case .success(let element): input = .success(element)
      case .failure(let error as CoChannelError): input = .failure(error)
      case .failure: return  // cancelled with `promise`
      }
      switch process(input) {
      case .element(let output): promise.complete(with: .success(output), keepingIn: undelivered)
      case .end(let error): promise.complete(with: .failure(error), keepingIn: undelivered)
      case .skip:
        guard promise.cell.isPending else { return }
        if let ready = receiveNow() {
          promise.complete(with: ready, keepingIn: undelivered)
        } else {
          receiveUpstream(into: promise, pending)
        }
      }
    }
  }

  @usableFromInline func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Element, Output>
  ) {
    base.source.initializeSelectSlot(
      slot,
      .result { [self] upstream in
        switch process(upstream) {
        case .element(let output): return try body.run(with: .success(output))
        case .end(let error): return try body.run(with: .failure(error))
        case .skip: throw StageDroppedElement()
        }
      })
  }

  @usableFromInline var holdsReadyOutcome: Bool { !undelivered.isEmpty || decidedEnd != nil }

  @usableFromInline func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType {
    base.source.receiverBufferType(as: T.self)
  }

  @usableFromInline var count: Int {
    undelivered.elementCount + (decidedEnd == nil ? base.count : 0)
  }

  @usableFromInline var isEmpty: Bool { count == 0 }
}

/// The future of `base` a derived `receiveFuture` is waiting for, so that cancelling the
/// derived future cancels it (giving up its turn in the channel).
final class PendingFuture<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: the state is inside the mutex.
  private let state = InlineMutex<(future: CoFuture<Value>?, isCanceled: Bool)>((nil, false))

  /// Holds `future` as the one waited for; `false` (after cancelling it) if the derived
  /// future was cancelled already.
  func hold(_ future: CoFuture<Value>) -> Bool {
    let canceled = state.withCriticalSection { state -> Bool in
      if state.isCanceled { return true }
      state.future = future
      return false
    }
    if canceled { future.cancel() }
    return !canceled
  }

  /// The derived future was cancelled: cancels the one waited for, and any held later.
  @usableFromInline func cancel() {
    let future = state.withCriticalSection { state -> UncheckedSendable<CoFuture<Value>?> in
      state.isCanceled = true
      return UncheckedSendable(state.future.take())
    }
    future.value?.cancel()
  }
}

extension CoChannel.Receiver {
  /// A receiver of the view `source`: its receive and poll are made here, where `source`'s type
  /// is known, so that they run specialized (inlined into client code, for the operators that
  /// are `@inlinable`).
  @inlinable
  convenience init<Source: ViewReceiving>(view source: Source) where Source.Element == Element {
    self.init(
      derivedReceive: { try $0.initializeMemory(as: Element.self, to: source.awaitReceive()) },
      derivedPoll: { out in
        guard let element = source.poll() else { return false }
        out.initializeMemory(as: Element.self, to: element)
        return true
      }, source: source)
  }
}
