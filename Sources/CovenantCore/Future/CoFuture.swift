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
  /// The state and observers; the first stored property (see `ResolutionCell.offsetInOwner`).
  @usableFromInline package let cell: ResolutionCell

  /// A pending future (the base of `CoPromise` and of every derived future).
  @inlinable init() {
    cell = ResolutionCell()
    cell.assertLocated(in: self)
  }

  /// Creates a future that is already complete with `result`.
  ///
  /// ```swift
  /// let ready = CoFuture<Int>(result: .success(42))
  /// ```
  @inlinable public init(result: Result<Value, any Error>) {
    cell = ResolutionCell(resolved: result)
    cell.assertLocated(in: self)
  }

  deinit {
    // Nobody can complete a deallocated future: whoever still observes it learns it was
    // cancelled (SwiftCoroutine's rule). The last reference is gone, so whoever resolved it
    // has finished, status included. The status is a plain atomic at a fixed offset: no
    // generic metadata is needed to read it here, where the code is unspecialized.
    //
    // The observers are told through a stand-in future cancelled for good, not this one: a
    // resolution being notified on this stack queues them, and this object is gone by then.
    if cell.currentStatus == CellStatus.pending {
      let chain = cell.takeChainOfAbandoned()
      if !chain.isNone {
        ResolutionDrain.notify(chain, owner: abandonedFuture, leavesPromiseGroup: false)
      }
    }
    cell.destroyPayload(as: Value.self)
  }

  /// Creates a future completed by a callback-style API: `promise` is called at once with a
  /// completion handler; the first call of that handler completes the future.
  ///
  /// ```swift
  /// let data = CoFuture<Data> { complete in
  ///   session.load(url) { data, error in complete(data.map { .success($0) } ?? .failure(error!)) }
  /// }
  /// ```
  public convenience init(
    promise: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
  ) {
    self.init()
    promise { [self] result in resolve(result) }
  }

  // MARK: State

  /// The outcome if the future is complete, else `nil`.
  @inlinable public final var result: Result<Value, any Error>? { cell.result(as: Value.self) }

  /// Whether the future was cancelled (it failed with `CoFutureError.canceled`).
  @inlinable public final var isCanceled: Bool {
    cell.currentStatus == CellStatus.rejected && cell.loadError().isCoFutureCancellation
  }

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
  /// any lock; `nil` if it was already resolved.
  @inlinable
  final func claimResolution(_ result: Result<Value, any Error>) -> ObserverList<Value>? {
    guard let chain = cell.resolve(result) else { return nil }
    return ObserverList(chain: chain, future: self)
  }

  /// Runs `observer` synchronously when the future completes (at once if it has).
  @inlinable final func whenResolved(_ observer: @escaping (Result<Value, any Error>) -> Void) {
    cell.whenResolved(observer)
  }

  /// Makes cancelling this future cancel `parent` (held weakly: a parent keeps its derived
  /// futures alive, not the other way round).
  @inlinable final func cancelsParent<Parent>(_ parent: CoFuture<Parent>) {
    whenResolved { [weak parent] result in
      if result.isCoFutureCancellation { parent?.cancel() }
    }
  }
}

/// What the observers of a future deallocated while pending are told, in its place: a future
/// cancelled once and for all (its cell reads the same as a cancelled future's).
private let abandonedFuture = CoFuture<Void>(result: .failure(CoFutureError.canceled))

extension CoFuture: Hashable {
  /// Futures are equal only when they are the same object.
  public static func == (lhs: CoFuture, rhs: CoFuture) -> Bool { lhs === rhs }

  /// Hashes the future's identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension Result {
  /// Whether this is the failure `CoFutureError.canceled`.
  @inlinable var isCoFutureCancellation: Bool {
    if case .failure(let error) = self { return error.isCoFutureCancellation }
    return false
  }
}

extension Error {
  /// Whether this is `CoFutureError.canceled`.
  @inlinable var isCoFutureCancellation: Bool {
    if let error = self as? CoFutureError, error == .canceled { return true }
    return false
  }
}
