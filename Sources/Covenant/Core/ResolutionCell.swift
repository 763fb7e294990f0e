import Synchronization

/// A callback told about a resolution. Runs synchronously on the resolving thread.
@usableFromInline
typealias ResolutionObserver<Value> = (Result<Value, any Error>) -> Void

/// The one state/observer core behind both `Promise` and `CoFuture`.
///
/// It holds pending → resolved(Result) once, and the observers registered while pending. Locking
/// lives here and nowhere else: every other type asks the cell and runs the observers it hands
/// back *outside* the lock, so observers may freely touch the cell again.
@usableFromInline
struct ResolutionCell<Value>: ~Copyable {
  @usableFromInline let state: Mutex<ResolutionState<Value>>

  @inlinable init() { state = Mutex(ResolutionState()) }

  @inlinable init(resolved result: Result<Value, any Error>) { state = Mutex(ResolutionState(result: result)) }

  /// The result if resolved.
  @inlinable var result: Result<Value, any Error>? { state.withLock { $0.result } }

  @inlinable var isPending: Bool { result == nil }

  /// Records `result` if still pending and returns the observers to run (outside any lock); `nil`
  /// when already resolved (later resolutions are no-ops).
  @inlinable func resolve(_ result: Result<Value, any Error>) -> ObserverList<Value>? {
    state.withLock { state in
      guard state.result == nil else { return nil }
      state.result = result
      return state.observers.take()
    }
  }

  /// Adds `observer` if pending; otherwise returns the result so the caller can act on it.
  @inlinable func observe(_ observer: @escaping ResolutionObserver<Value>) -> Result<Value, any Error>? {
    state.withLock { state in
      if let result = state.result { return result }
      state.observers.append(observer)
      return nil
    }
  }
}

/// What `ResolutionCell` guards. (Top level, not nested: Swift 6.3 miscompiles a private type
/// nested in a generic non-copyable struct.) `@unchecked Sendable`: it is only ever touched
/// inside the cell's mutex, and the observers it hands out run on whichever thread resolves.
@usableFromInline
struct ResolutionState<Value>: @unchecked Sendable {
  @usableFromInline var result: Result<Value, any Error>?
  @usableFromInline var observers = ObserverList<Value>()

  @inlinable init(result: Result<Value, any Error>? = nil) { self.result = result }
}

/// Observers in registration order, without an array allocation for the common 0 or 1.
@usableFromInline
struct ObserverList<Value>: @unchecked Sendable {
  @usableFromInline enum Storage {
    case empty
    case one(ResolutionObserver<Value>)
    case many([ResolutionObserver<Value>])
  }

  @usableFromInline var storage = Storage.empty

  @inlinable init() {}

  @inlinable var isEmpty: Bool {
    if case .empty = storage { return true }
    return false
  }

  @inlinable mutating func append(_ observer: @escaping ResolutionObserver<Value>) {
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
  @inlinable mutating func take() -> ObserverList<Value> {
    let taken = self
    storage = .empty
    return taken
  }

  /// Runs every observer with `result`, in order.
  @inlinable func notify(_ result: Result<Value, any Error>) {
    switch storage {
    case .empty: break
    case .one(let observer): observer(result)
    case .many(let all): for observer in all { observer(result) }
    }
  }
}
