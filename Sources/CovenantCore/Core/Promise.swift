import Dispatch

/// A placeholder for a value that will be available later, or an error: google/promises'
/// `Promise` (FBLPromise) for Linux and macOS.
///
/// A promise starts *pending* and is resolved once, either *fulfilled* with a value or
/// *rejected* with an error; later resolutions are ignored. Blocks chained with `then`,
/// `catch` and the other operators always run asynchronously on a dispatch queue
/// (`DispatchQueue.promises` unless given), never inline in `fulfill`, even when the promise is
/// already resolved.
///
/// ```swift
/// let user = Promise<User>(on: .global()) { fulfill, reject in
///   api.fetchUser(id) { result in
///     switch result { case .success(let u): fulfill(u); case .failure(let e): reject(e) }
///   }
/// }
/// user.then { $0.name }.then { print("hello, \($0)") }.catch { print("failed: \($0)") }
/// ```
///
/// Threading: every member is safe to call from any thread. A pending promise belongs to
/// `DispatchGroup.promises` until it is resolved or deallocated, so `waitForPromises(timeout:)`
/// can wait for all outstanding work.
///
/// `Promise` is `@unchecked Sendable`: its state is guarded by the lock and atomics inside
/// `ResolutionCell`, and values move between threads exactly as chained blocks are dispatched.
public final class Promise<Value>: @unchecked Sendable {
  /// A work block that resolves a promise through the two callbacks it is handed.
  ///
  /// Kept for google/promises source compatibility; Covenant's own signatures write the type out
  /// in full, because `@Sendable` written on a parameter of a function-type typealias is dropped
  /// by the compiler, which would leave racy captures undiagnosed.
  public typealias Async = (
    _ fulfill: @escaping @Sendable (Value) -> Void,
    _ reject: @escaping @Sendable (any Error) -> Void
  ) throws -> Void

  /// A work block that produces a value (or a promise of one) or throws. Kept for google/promises
  /// source compatibility (see `Async` for why signatures do not use it).
  public typealias Do<T> = () throws -> T

  /// The state and observers; the first stored property (see `ResolutionCell.offsetInOwner`).
  @usableFromInline package let cell: ResolutionCell

  /// Whether this promise still counts in `DispatchGroup.promises`. Kept apart from `cell`
  /// because `deinit` runs unspecialized, where reading the generic cell costs runtime
  /// metadata lookups on every deallocation.
  @usableFromInline let isInDispatchGroup: InlineByteAtomic<Bool>

  /// Creates a pending promise; resolve it with `fulfill(_:)`, `reject(_:)` or `resolve(_:)`.
  @inlinable public init() {
    cell = ResolutionCell()
    isInDispatchGroup = InlineByteAtomic(true)
    DispatchGroup.promises.enter()
    cell.assertLocated(in: self)
  }

  /// Creates a promise fulfilled with `value`, or rejected with the error `value` throws.
  ///
  /// A value that is an error (see `then`) rejects, as in google/promises: `Promise<Any>(e)`.
  ///
  /// Disfavored so that `Promise(future)` (a `CoFuture`) means the conversion, not a
  /// `Promise<CoFuture<…>>`; when `Value` conforms to `Error`, the overload in the
  /// `where Value: Error` extension below is the one chosen.
  @_disfavoredOverload
  @inlinable
  public init(_ value: @autoclosure () throws -> Value) {
    isInDispatchGroup = InlineByteAtomic(false)
    cell = ResolutionCell(resolved: Self.outcome(of: value))
    cell.assertLocated(in: self)
  }

  /// What `init(_ value:)` resolves with: the value, the error it is, or the error it throws.
  @usableFromInline static func outcome(of value: () throws -> Value) -> Result<Value, any Error> {
    do {
      let value = try value()
      if let error = returnedError(value) { return .failure(error) }
      return .success(value)
    } catch {
      return .failure(error)
    }
  }

  /// Creates a promise rejected with `error`.
  ///
  /// Disfavored: when `Value` itself conforms to `Error` (`extension String: Error {}`), an
  /// argument of type `Value` means the value initializer, as in google/promises; otherwise an
  /// unstated `Value` could be "solved" as any type, turning `Promise("text")` into a rejection.
  @_disfavoredOverload
  @inlinable
  public init(_ error: any Error) {
    isInDispatchGroup = InlineByteAtomic(false)
    cell = ResolutionCell(rejectedWith: error)
    cell.assertLocated(in: self)
  }

  /// Creates a promise with the given outcome.
  @inlinable init(result: Result<Value, any Error>) {
    isInDispatchGroup = InlineByteAtomic(false)
    cell = ResolutionCell(resolved: result)
    cell.assertLocated(in: self)
  }

  /// Creates a pending promise; the same as `Promise()`.
  public static func pending() -> Promise<Value> { Promise() }

  deinit {
    // A pending promise nobody can resolve any more still has to leave the group.
    if isInDispatchGroup.load(ordering: .relaxed) { DispatchGroup.promises.leave() }
    cell.destroyPayload(as: Value.self)
  }

  // MARK: Resolving

  /// Fulfils the promise with `value` if it is still pending; otherwise does nothing.
  @inlinable public func fulfill(_ value: Value) {
    guard let chain = cell.fulfill(value) else { return }
    finishResolution(chain)
  }

  /// Rejects the promise with `error` if it is still pending; otherwise does nothing.
  @inlinable public func reject(_ error: any Error) {
    guard let chain = cell.reject(error) else { return }
    finishResolution(chain)
  }

  /// Resolves the promise with `result` if it is still pending; otherwise does nothing.
  @inlinable public func resolve(_ result: Result<Value, any Error>) {
    switch result {
    case .success(let value): fulfill(value)
    case .failure(let error): reject(error)
    }
  }

  /// After the winning resolution (once; deinit cannot run concurrently with it): notifies
  /// the reactions (through the `ResolutionDrain` of this stack), then leaves the group (the
  /// notified reactions have been released by then).
  @inlinable func finishResolution(_ chain: ReactionBits) {
    assert(isInDispatchGroup.load(ordering: .relaxed), "a pending promise leaves the group once")
    isInDispatchGroup.store(false, ordering: .relaxed)
    if chain.isNone {
      DispatchGroup.promises.leave()
    } else {
      ResolutionDrain.notify(chain, owner: self, leavesPromiseGroup: true)
    }
  }

  // MARK: State

  /// Whether the promise is neither fulfilled nor rejected yet.
  @inlinable public var isPending: Bool { cell.isPending }

  /// Whether the promise has been fulfilled.
  @inlinable public var isFulfilled: Bool { cell.currentStatus == CellStatus.fulfilled }

  /// Whether the promise has been rejected.
  @inlinable public var isRejected: Bool { cell.currentStatus == CellStatus.rejected }

  /// The value if fulfilled, else `nil`. A promise of an optional fulfilled with `nil` has the
  /// value `nil` too (not `.some(nil)`), as in google/promises; `isFulfilled` tells it apart
  /// from a pending one.
  public var value: Value? {
    guard cell.currentStatus == CellStatus.fulfilled else { return nil }
    let value = cell.loadValue(as: Value.self)
    return isNilOptional(value) ? nil : value
  }

  /// The error if rejected, else `nil`.
  @inlinable public var error: (any Error)? {
    cell.currentStatus == CellStatus.rejected ? cell.loadError() : nil
  }

  /// The outcome if resolved, else `nil`.
  @inlinable public var result: Result<Value, any Error>? { cell.result(as: Value.self) }
}

extension Promise where Value: Error {
  /// Creates a promise with `value`, a value of a type that conforms to `Error`: rejected with
  /// it when its type is declared as an error (`Promise(MyError.failed)`), fulfilled with it
  /// when it is a standard value type given a retroactive conformance
  /// (`extension String: Error {}`, then `Promise("")`); rejected with the error `value`
  /// throws. As in google/promises, where the former bridge to `NSError`, the latter to
  /// `NSString` and friends.
  ///
  /// Chosen over `init(_ error:)` whenever the argument has type `Value`.
  public convenience init(_ value: @autoclosure () throws -> Value) {
    self.init(result: Self.outcome(of: value))
  }
}

extension Promise: CustomStringConvertible {
  /// `"Fulfilled: <value>"`, `"Rejected: <error>"` or `"Pending: <Value type>"`.
  public var description: String {
    switch cell.result(as: Value.self) {
    case .success(let value): return "Fulfilled: \(value)"
    case .failure(let error): return "Rejected: \(error)"
    case nil: return "Pending: \(Value.self)"
    }
  }
}
