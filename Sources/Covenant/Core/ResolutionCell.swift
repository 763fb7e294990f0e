import Synchronization

/// A callback told about a resolution. Runs synchronously on the resolving thread.
@usableFromInline
typealias ResolutionObserver<Value> = (Result<Value, any Error>) -> Void

/// An observer of a resolution whose value type is erased: it receives the
/// `Result<Value, any Error>` boxed in `Any`.
@usableFromInline
typealias ErasedObserver = (Any) -> Void

/// The one state/observer core behind both `Promise` and `CoFuture`.
///
/// It holds pending → resolved(Result) once, and the observers registered while pending. Locking
/// lives here and nowhere else: every other type asks the cell and runs the observers it hands
/// back *outside* the lock, so observers may freely touch the cell again.
///
/// The typed API is generic; the *storage* is not: the result is kept boxed in `Any` and the
/// observers as `ErasedObserver`s. That keeps the layout of every `ResolutionCell<Value>`
/// independent of `Value`, so the deinitializers of `Promise` and `CoFuture` — which run
/// unspecialized in this module — destroy it without looking up generic type metadata at run
/// time (a lookup per nested generic type used to dominate a short promise's whole life).
/// Results of up to three words are boxed inline, without an allocation.
@usableFromInline
struct ResolutionCell<Value>: ~Copyable {
  @usableFromInline let state: Mutex<ErasedResolutionState>

  @inlinable init() { state = Mutex(ErasedResolutionState()) }

  @inlinable init(resolved result: Result<Value, any Error>) {
    state = Mutex(ErasedResolutionState(outcome: result as Any))
  }

  /// The result if resolved.
  @inlinable var result: Result<Value, any Error>? {
    guard let outcome = state.withCriticalSection({ $0.outcome }) else { return nil }
    return Self.unbox(outcome)
  }

  @inlinable var isPending: Bool { state.withCriticalSection { $0.outcome == nil } }

  /// Records `result` if still pending and returns the observers to run (outside any lock); `nil`
  /// when already resolved (later resolutions are no-ops).
  @inlinable func resolve(_ result: Result<Value, any Error>) -> ObserverList<Value>? {
    let outcome = result as Any
    let observers = state.withCriticalSection { state -> ErasedObserverList? in
      guard state.outcome == nil else { return nil }
      state.outcome = outcome
      return state.observers.take()
    }
    return observers.map { ObserverList(erased: $0, outcome: outcome) }
  }

  /// Adds `observer` if pending; otherwise returns the result so the caller can act on it.
  @inlinable func observe(_ observer: @escaping ResolutionObserver<Value>) -> Result<Value, any Error>? {
    observeErased { observer(Self.unbox($0)) }.map(Self.unbox)
  }

  /// `observe` for observers that take the boxed outcome (or ignore it): no wrapping closure.
  @inlinable func observeErased(_ observer: @escaping ErasedObserver) -> Any? {
    state.withCriticalSection { state in
      if let outcome = state.outcome { return outcome }
      state.observers.append(observer)
      return nil
    }
  }

  @inlinable static func unbox(_ outcome: Any) -> Result<Value, any Error> {
    // Always exactly this type: boxed by `resolve`/`init(resolved:)` of this cell.
    outcome as! Result<Value, any Error>
  }
}

/// What `ResolutionCell` guards: no generic parameter, see there. `@unchecked Sendable`: it is
/// only ever touched inside the cell's mutex, and the observers it hands out run on whichever
/// thread resolves.
@usableFromInline
struct ErasedResolutionState: @unchecked Sendable {
  @usableFromInline var outcome: Any?
  @usableFromInline var observers = ErasedObserverList()

  @inlinable init(outcome: Any? = nil) { self.outcome = outcome }
}

/// Observers in registration order, without an array allocation for the common 0 or 1.
@usableFromInline
struct ErasedObserverList: @unchecked Sendable {
  @usableFromInline enum Storage {
    case empty
    case one(ErasedObserver)
    case many([ErasedObserver])
  }

  @usableFromInline var storage = Storage.empty

  @inlinable init() {}

  @inlinable var isEmpty: Bool {
    if case .empty = storage { return true }
    return false
  }

  @inlinable mutating func append(_ observer: @escaping ErasedObserver) {
    switch storage {
    case .empty: storage = .one(observer)
    case .one(let first): storage = .many([first, observer])
    case .many(var all):
      storage = .empty  // drop our reference so the array is uniquely referenced
      all.append(observer)
      storage = .many(all)
    }
  }

  /// Empties the list, returning what it held.
  @inlinable mutating func take() -> ErasedObserverList {
    let taken = self
    storage = .empty
    return taken
  }

  /// Runs every observer with `outcome`, in order.
  @inlinable func notify(_ outcome: Any) {
    switch storage {
    case .empty: break
    case .one(let observer): observer(outcome)
    case .many(let all): for observer in all { observer(outcome) }
    }
  }
}

/// The observers a resolution hands back, with the outcome they are to be told about.
@usableFromInline
struct ObserverList<Value>: @unchecked Sendable {
  @usableFromInline let erased: ErasedObserverList
  @usableFromInline let outcome: Any

  @inlinable init(erased: ErasedObserverList, outcome: Any) {
    self.erased = erased
    self.outcome = outcome
  }

  @inlinable var isEmpty: Bool { erased.isEmpty }

  /// Runs every observer, in order, with the result this list was resolved with (`result`
  /// names it at the call site; the stored box is reused rather than boxing it again).
  @inlinable func notify(_ result: Result<Value, any Error>) {
    erased.notify(outcome)
  }
}
