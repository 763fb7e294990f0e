import Synchronization

/// The read side of a value that becomes available later: SwiftCoroutine's `CoFuture`.
///
/// A future is *pending* until it is completed once, with a value or an error; later completions
/// are ignored. Inside a coroutine `await()` suspends the coroutine (not the thread) until then.
/// Callbacks registered with `whenComplete` and friends, and the transforms of `map`,
/// `flatMap` and the other operators, run **synchronously** on the thread that completes the
/// future (at once, on the calling thread, when it is already complete).
///
/// ```swift
/// let sum = CoFuture { try array.reduce(0) { try $0 + $1.await() } }   // [CoFuture<Int>]
/// sum.whenSuccess { print("sum:", $0) }
/// ```
///
/// Cancelling a future (`cancel()`) fails it with `CoFutureError.canceled` and cancels what it
/// was derived from: the future an operator was applied to, the coroutine started by
/// `init(task:)` or `coroutineFuture`, the `Promise` it was made from. A pending future that is
/// deallocated fails its observers with `CoFutureError.canceled`.
///
/// The state and its observers live in the same `ResolutionCell` core that `Promise` uses, so
/// `CoFuture(promise)`, `future.promise` and `Promise(future)` convert in O(1) without a queue
/// hop.
///
/// Threading: every member is safe to call from any thread. `@unchecked Sendable`: all mutable
/// state is inside the cell's mutex; values and callbacks move to the completing thread by
/// design, exactly as with `Promise`.
public class CoFuture<Value>: @unchecked Sendable {
  /// Set once the cell is resolved. Kept apart from (and before) the generic `cell` because
  /// `deinit` runs unspecialized, where reading the cell costs runtime metadata lookups on
  /// every deallocation; this flag sits at a fixed offset and needs none.
  @usableFromInline let isResolved: Atomic<Bool>
  @usableFromInline let cell: ResolutionCell<Value>

  /// A pending future (the base of `CoPromise` and of every derived future).
  @inlinable init() {
    isResolved = Atomic(false)
    cell = ResolutionCell()
  }

  /// Creates a future that is already complete with `result`.
  ///
  /// ```swift
  /// let ready = CoFuture<Int>(result: .success(42))
  /// ```
  @inlinable public init(result: Result<Value, any Error>) {
    isResolved = Atomic(true)
    cell = ResolutionCell(resolved: result)
  }

  deinit {
    // Nobody can complete a deallocated future: whoever still observes it learns it was
    // cancelled (SwiftCoroutine's rule). The last reference is gone, so whoever resolved it
    // has finished, flag included.
    if isResolved.load(ordering: .acquiring) { return }
    if let observers = cell.resolve(.failure(CoFutureError.canceled)), !observers.isEmpty {
      observers.notify(.failure(CoFutureError.canceled))
    }
  }

  /// Creates a future completed by a callback-style API: `promise` is called at once with a
  /// completion handler; the first call of that handler completes the future.
  ///
  /// ```swift
  /// let data = CoFuture<Data> { complete in
  ///   session.load(url) { data, error in complete(data.map { .success($0) } ?? .failure(error!)) }
  /// }
  /// ```
  @preconcurrency
  public convenience init(
    promise: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
  ) {
    self.init()
    promise { [self] result in resolve(result) }
  }

  // MARK: State

  /// The outcome if the future is complete, else `nil`.
  @inlinable public final var result: Result<Value, any Error>? { cell.result }

  /// Whether the future was cancelled (it failed with `CoFutureError.canceled`).
  @inlinable public final var isCanceled: Bool { cell.result?.isCoFutureCancellation ?? false }

  /// Fails the future with `CoFutureError.canceled` if it is still pending, and cancels what it
  /// was derived from (its parent future, the coroutine computing it, the `Promise` it wraps).
  /// Does nothing when the future is already complete.
  @inlinable public final func cancel() { resolve(.failure(CoFutureError.canceled)) }

  // MARK: Internal core

  /// Completes the future if pending and runs its observers on this thread. Returns whether
  /// this call completed it.
  @inlinable @discardableResult
  final func resolve(_ result: Result<Value, any Error>) -> Bool {
    guard let observers = claimResolution(result) else { return false }
    observers.notify(result)
    return true
  }

  /// Resolves the cell if pending and returns the observers for the caller to notify outside
  /// any lock; `nil` if it was already resolved. Every resolution goes through here (the flag).
  @inlinable
  final func claimResolution(_ result: Result<Value, any Error>) -> ObserverList<Value>? {
    guard let observers = cell.resolve(result) else { return nil }
    isResolved.store(true, ordering: .releasing)
    return observers
  }

  /// Runs `observer` synchronously when the future completes (at once if it has).
  @inlinable final func whenResolved(_ observer: @escaping ResolutionObserver<Value>) {
    if let result = cell.observe(observer) { observer(result) }
  }

  /// Makes cancelling this future cancel `parent` (held weakly: a parent keeps its derived
  /// futures alive, not the other way round).
  @inlinable final func cancelsParent<Parent>(_ parent: CoFuture<Parent>) {
    whenResolved { [weak parent] result in
      if result.isCoFutureCancellation { parent?.cancel() }
    }
  }
}

extension CoFuture: Hashable {
  /// Futures are equal only when they are the same object.
  public static func == (lhs: CoFuture, rhs: CoFuture) -> Bool { lhs === rhs }

  /// Hashes the future's identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension Result {
  /// Whether this is the failure `CoFutureError.canceled`.
  @inlinable var isCoFutureCancellation: Bool {
    if case .failure(let error) = self, let error = error as? CoFutureError, error == .canceled {
      return true
    }
    return false
  }
}
