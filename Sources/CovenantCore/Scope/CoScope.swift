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
/// `join()` waits until every coroutine of the scope has ended, and `cancelAndJoin()` cancels
/// them first; `uncaughtErrorHandler` receives the errors their bodies throw.
///
/// Thread-safe: items may be added and the scope cancelled from any thread.
public final class CoScope: CoCancellable, @unchecked Sendable {
  struct State: @unchecked Sendable {
    var items: [UInt64: WeakCancellable] = [:]
    var nextKey: UInt64 = 0
    var isCanceled = false
    var callbacks: [() -> Void] = []
    /// Coroutines started in the scope (or of futures added to it) whose bodies have not
    /// ended; unlike `items`, kept through a cancel, for `join()`.
    var running: Set<ObjectIdentifier> = []
    /// Called once `running` is empty; keyed (from `nextKey`) so a cancelled `join()` can take
    /// its callback back.
    var joiners: [Joiner] = []
    /// Scopes added to this one, which `join()` also waits for (kept through a cancel too).
    /// The entries of children that are gone are pruned (`addChild`), so that many short-lived
    /// children do not pile up.
    var children: [WeakScope] = []
    /// `children.count` at which `addChild` next prunes: twice the live entries found at the
    /// last pruning (at least 16), so that pruning costs O(1) amortized per child added, and
    /// `children` never holds more than that.
    var childrenPruneCount = 16
    var uncaughtErrorHandler: (@Sendable (UncaughtCoroutineError) -> Void)?
    /// The scope this one was added to, whose uncaught-error handler serves when this one has
    /// none.
    var parent: WeakScope?
  }

  /// A `join()` waiting for the scope's coroutines to end.
  struct Joiner {
    let key: UInt64
    let callback: @Sendable () -> Void
  }

  let state = InlineMutex(State())

  /// Creates an empty scope.
  public init() {}

  deinit { cancel() }

  /// Adds `item`; cancels it at once if the scope is already cancelled.
  ///
  /// A scope added this way becomes a child: this scope's `join()` waits for its coroutines
  /// too, and its coroutines' uncaught errors go to this scope's handler when it has none. A
  /// future of `coroutineFuture` added this way is joined like a coroutine started in the
  /// scope.
  public func add(_ item: some CoCancellable) {
    if let child = item as? CoScope {
      child.state.withCriticalSection { $0.parent = WeakScope(self) }
      state.withCriticalSection { $0.addChild(child) }
    } else if let item = item as? any JoinedByScope {
      item.addRunningWork(to: self)
    }
    addCancellable(item)
  }

  /// Adds `item` to the items cancelled with the scope.
  func addCancellable(_ item: some CoCancellable) {
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
    let (items, callbacks) = state.withCriticalSection {
      state -> ([WeakCancellable], [() -> Void]) in
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

extension CoScope.State {
  /// Keeps `child`, first pruning the entries of gone children once `children` has reached
  /// `childrenPruneCount`: a scope that outlives many short-lived children (one per request,
  /// say) would otherwise keep an entry for every one of them.
  mutating func addChild(_ child: CoScope) {
    if children.count >= childrenPruneCount {
      children.removeAll { $0.scope == nil }
      childrenPruneCount = Swift.max(16, 2 * children.count)
    }
    children.append(WeakScope(child))
  }
}

extension CoScope {
  /// The entries `children` holds, live or not (for tests: they must stay bounded).
  package var childEntryCount: Int { state.withCriticalSection { $0.children.count } }
}

/// An item whose running work a scope's `join()` waits for, beyond its completion (a
/// `coroutineFuture` future: its coroutine may run on after the future was cancelled). The
/// layers below the scopes' conform their items (`CoroutineFuture`).
protocol JoinedByScope: AnyObject {
  /// Has `scope` count the item's running work (`CoScope.track`), if any is left.
  func addRunningWork(to scope: CoScope)
}

struct WeakCancellable {
  weak var item: (any CoCancellable)?
  init(_ item: any CoCancellable) { self.item = item }
}

struct WeakScope {
  weak var scope: CoScope?
  init(_ scope: CoScope) { self.scope = scope }
}

/// A coroutine's weak reference to the scope it was started in, allocated only for coroutines
/// started in one.
final class WeakScopeLink: Sendable {
  weak let scope: CoScope?
  init(_ scope: CoScope) { self.scope = scope }
}
