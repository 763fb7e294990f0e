/// A value that changes over time, which any number of consumers can follow (Kotlin's
/// `StateFlow`, Combine's `CurrentValueSubject`): `value` is the current value, readable and
/// settable from any thread; `updates()` is a receiver of it, current value first.
///
/// ```swift
/// let connection = StateChannel(ConnectionState.disconnected)
/// let ui = connection.updates()                 // receives .disconnected at once
/// connection.value = .connecting
/// connection.value = .connected                 // a slow consumer may see only this one
/// ```
///
/// - **Conflated.** A subscriber that is slower than the changes receives the latest value,
///   never a backlog; it never receives a value older than one it has received.
/// - **Equal values** (when `Value` is `Equatable`): setting a value equal to the current one
///   changes nothing, and a subscriber never receives a value equal to the one it received
///   last (A, B, A set in a row may reach it as A).
/// - **Ends.** The state never ends by itself. Cancelling an updates receiver (or releasing
///   it) ends only that subscription; stages derived from it treat it as shared.
///
/// Threading: every member may be called from any thread. `@unchecked Sendable`: the state is
/// inside a mutex; values cross threads by design.
public final class StateChannel<Value>: @unchecked Sendable {
  struct State {
    var value: Value
    /// Counts the changes: a subscriber has seen the value when it has seen its version.
    var version: UInt64 = 1
    /// The doorbells of the subscriptions: rung (a conflated channel) at each change.
    var doorbells: [CoChannel<Void>] = []
  }

  private let state: InlineMutex<State>
  /// `==` when `Value` is `Equatable` (see `init(_:)`).
  let isEqual: ((Value, Value) -> Bool)?

  /// Creates a state holding `initial`.
  public init(_ initial: Value) {
    state = InlineMutex(State(value: initial))
    isEqual = nil
  }

  init(_ initial: Value, isEqual: @escaping (Value, Value) -> Bool) {
    state = InlineMutex(State(value: initial))
    self.isEqual = isEqual
  }

  /// The current value. Setting it reaches every subscription (unless it equals the current
  /// value, for an `Equatable` `Value`).
  ///
  /// A read and a set are each atomic; `state.value += 1` is a read and then a set, which
  /// another thread's set can come between.
  public var value: Value {
    get { state.withCriticalSection { $0.value } }
    set {
      let (doorbells, old) = state.withCriticalSection {
        state -> ([CoChannel<Void>], UncheckedSendable<Value>?) in
        if let isEqual, isEqual(state.value, newValue) { return ([], nil) }
        let old = state.value
        state.value = newValue
        state.version &+= 1
        return (state.doorbells, UncheckedSendable(old))
      }
      _ = old  // released here, outside the lock
      for doorbell in doorbells { doorbell.offer(()) }
    }
  }

  /// A receiver of the value: the current value at once, then each new value (conflated, and
  /// without repeats for an `Equatable` `Value`).
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   for state in connection.updates().makeIterator() { render(state) }
  /// }
  /// ```
  public func updates() -> CoChannel<Value>.Receiver {
    let subscription = StateSubscription(self)
    state.withCriticalSection { $0.doorbells.append(subscription.doorbell) }
    return CoChannel<Value>.Receiver(
      receive: { try subscription.awaitReceive() }, poll: { subscription.poll() },
      source: subscription)
  }

  /// The value and its version, read together.
  func current() -> (value: Value, version: UInt64) {
    state.withCriticalSection { ($0.value, $0.version) }
  }

  /// Forgets the subscription that `doorbell` rings.
  func forget(_ doorbell: CoChannel<Void>) {
    state.withCriticalSection { state in state.doorbells.removeAll { $0 === doorbell } }
  }
}

extension StateChannel where Value: Equatable {
  /// Creates a state holding `initial`; values are compared with `==` (an equal value set
  /// changes nothing, and subscribers skip repeats).
  public convenience init(_ initial: Value) {
    self.init(initial, isEqual: ==)
  }
}

/// One `updates()` subscription: what it has seen, and the doorbell its state rings at each
/// change. Every receive reads the state's current value if it has not seen it yet, and
/// otherwise waits for the doorbell; a ring that brings nothing new (a repeat) is waited past.
/// Nothing is taken from anywhere, so nothing can be lost: a receive future cancelled in any
/// instant leaves the value for the next receive.
final class StateSubscription<Value>: ChannelReceiving, @unchecked Sendable {
  // `@unchecked Sendable`: the mutable state is inside the mutex.
  let owner: StateChannel<Value>
  let doorbell = CoChannel<Void>(bufferType: .conflated)
  /// The version this subscription received last, and its value (kept only to skip repeats).
  private let seen = InlineMutex<(version: UInt64, value: Value?)>((0, nil))

  init(_ owner: StateChannel<Value>) { self.owner = owner }

  deinit {
    doorbell.cancel()
    owner.forget(doorbell)
  }

  /// The current value if this subscription has not received it (nor an equal one) yet.
  func takeNew() -> Value? {
    let (value, version) = owner.current()
    let isEqual = owner.isEqual
    return seen.withCriticalSection { seen -> Value? in
      guard version > seen.version else { return nil }
      seen.version = version
      if let isEqual {
        if let last = seen.value, isEqual(last, value) { return nil }
        seen.value = value
      }
      return value
    }
  }

  func awaitReceive() throws -> Value {
    while true {
      if let value = takeNew() { return value }
      try doorbell.awaitReceive()
    }
  }

  func receiveNow() -> Result<Value, CoChannelError>? {
    while true {
      if let value = takeNew() { return .success(value) }
      switch doorbell.receiveNow() {
      case nil: return nil
      case .success: continue
      case .failure(let error): return .failure(error)
      }
    }
  }

  func poll() -> Value? {
    if case .success(let value) = receiveNow() { return value }
    return nil
  }

  func whenReceive(_ callback: @escaping @Sendable (Result<Value, CoChannelError>) -> Void) {
    if let ready = receiveNow() { return callback(ready) }
    // Weakly: the doorbell holds the callback, and a subscription whose receiver was released
    // has ended (its doorbell is cancelled, and fails the callback).
    doorbell.whenReceive { [weak self] ring in
      switch ring {
      case .success:
        guard let self else { return callback(.failure(.canceled)) }
        whenReceive(callback)
      case .failure(let error): callback(.failure(error))
      }
    }
  }

  func receiveFuture() -> CoFuture<Value> {
    let promise = CoPromise<Value>()
    let pending = PendingFuture<Void>()
    promise.whenResolved { result in
      if result.isCoFutureCancellation { pending.cancel() }
    }
    complete(promise, pending)
    return promise
  }

  private func complete(_ promise: CoPromise<Value>, _ pending: PendingFuture<Void>) {
    if let ready = receiveNow() {
      promise.resolve(ready.mapError { $0 })
      return
    }
    let ring = doorbell.receiveFuture()
    guard pending.hold(ring) else { return }
    ring.whenResolved { [weak self] result in
      switch result {
      case .success:
        guard let self else { return promise.fail(CoChannelError.canceled) }
        complete(promise, pending)
      case .failure(let error as CoChannelError): promise.resolve(.failure(error))
      case .failure: return  // cancelled with `promise`
      }
    }
  }

  func initializeSelectSlot<Output>(
    _ slot: SelectSlot<Output>.Pointer, _ body: SelectCaseBody<Value, Output>
  ) {
    doorbell.initializeSelectSlot(
      slot,
      .result { [self] ring in
        switch ring {
        case .success:
          // A repeat: the case was not performed, the select goes on waiting.
          guard let value = takeNew() else { throw StageDroppedElement() }
          return try body.run(with: .success(value))
        case .failure(let error): return try body.run(with: .failure(error))
        }
      })
  }

  var holdsReadyOutcome: Bool { owner.current().version > seen.withCriticalSection { $0.version } }

  func receiverBufferType<T>(as type: T.Type) -> CoChannel<T>.BufferType { .conflated }

  var count: Int { holdsReadyOutcome && !doorbell.isCanceled ? 1 : 0 }

  var isEmpty: Bool { count == 0 }

  var isClosed: Bool { doorbell.isClosed }

  func cancel() {
    // Nothing is new to a cancelled subscription: its receives meet the doorbell's end.
    seen.withCriticalSection { $0.version = .max }
    doorbell.cancel()
    owner.forget(doorbell)
  }

  var isCanceled: Bool { doorbell.isCanceled }

  func whenCanceled(_ callback: @escaping @Sendable () -> Void) { doorbell.whenCanceled(callback) }

  func whenComplete(_ callback: @escaping () -> Void) { doorbell.whenComplete(callback) }
}
