import Synchronization

/// A set of cancellable work that is cancelled together: when the scope is cancelled, or
/// deallocated, everything in it is cancelled.
///
/// Items are held weakly and dropped as they complete. An item added to a cancelled scope is
/// cancelled at once, before `add` returns. A scope is itself `CoCancellable`, so scopes nest.
///
/// ```swift
/// final class ProfileViewModel {
///   private let scope = CoScope()          // cancels the work below when the model goes away
///
///   func load() {
///     DispatchQueue.main.startCoroutine(in: scope) {
///       let profile = try api.profile().await()
///       self.show(profile)
///     }
///   }
/// }
/// ```
///
/// Thread-safe: items may be added and the scope cancelled from any thread.
public final class CoScope: CoCancellable, @unchecked Sendable {
  private struct State: @unchecked Sendable {
    var items: [UInt64: WeakCancellable] = [:]
    var nextKey: UInt64 = 0
    var isCanceled = false
    var callbacks: [() -> Void] = []
  }

  private let state = Mutex(State())

  /// Creates an empty scope.
  public init() {}

  deinit { cancel() }

  /// Adds `item`; cancels it at once if the scope is already cancelled.
  public func add(_ item: some CoCancellable) {
    let key = state.withCriticalSection { state -> UInt64? in
      guard !state.isCanceled else { return nil }
      state.nextKey += 1
      state.items[state.nextKey] = WeakCancellable(item)
      return state.nextKey
    }
    guard let key else {
      item.cancel()
      return
    }
    item.whenComplete { [weak self] in self?.remove(key) }
  }

  private func remove(_ key: UInt64) {
    _ = state.withCriticalSection { $0.items.removeValue(forKey: key) }
  }

  /// Whether the scope holds no live, incomplete items.
  public var isEmpty: Bool {
    state.withCriticalSection { state in
      state.items = state.items.filter { $0.value.item != nil }
      return state.items.isEmpty
    }
  }

  /// Whether the scope has been cancelled.
  public var isCanceled: Bool { state.withCriticalSection { $0.isCanceled } }

  /// Cancels every item and runs the `whenComplete` callbacks. Idempotent.
  public func cancel() {
    let (items, callbacks) = state.withCriticalSection { state -> ([WeakCancellable], [() -> Void]) in
      guard !state.isCanceled else { return ([], []) }
      state.isCanceled = true
      defer {
        state.items = [:]
        state.callbacks = []
      }
      return (Array(state.items.values), state.callbacks)
    }
    for item in items { item.item?.cancel() }
    for callback in callbacks { callback() }
  }

  /// Registers `callback` to run once when the scope is cancelled (explicitly or by deinit),
  /// at once if it already is. Merely becoming empty does not complete a scope.
  public func whenComplete(_ callback: @escaping () -> Void) {
    let runNow = state.withCriticalSection { state -> Bool in
      if state.isCanceled { return true }
      state.callbacks.append(callback)
      return false
    }
    if runNow { callback() }
  }
}

private struct WeakCancellable {
  weak var item: (any CoCancellable)?
  init(_ item: any CoCancellable) { self.item = item }
}
