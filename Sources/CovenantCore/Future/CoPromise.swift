/// The write side of a `CoFuture`: a future you complete yourself, once.
///
/// ```swift
/// let promise = CoPromise<Int>()
/// DispatchQueue.global().async { promise.success(42) }
/// DispatchQueue.main.startCoroutine { print(try promise.await()) }
/// ```
///
/// Only the first completion counts; later `success`, `fail` and `complete` calls are ignored.
/// Dropping the last reference to a pending promise fails its observers with
/// `CoFutureError.canceled`. Safe to complete from any thread.
// `@unchecked Sendable` (restated from `CoFuture`): no state of its own.
public final class CoPromise<Value>: CoFuture<Value>, @unchecked Sendable {
  /// Creates a pending promise.
  @inlinable public override init() { super.init() }

  /// Completes the promise with `value`.
  @inlinable public func success(_ value: Value) { resolve(.success(value)) }

  /// Completes the promise with `error`.
  @inlinable public func fail(_ error: any Error) { resolve(.failure(error)) }

  /// Completes the promise with `result`.
  @inlinable public func complete(with result: Result<Value, any Error>) { resolve(result) }

  /// Completes the promise with `future`'s outcome when that future completes (at once if it
  /// has). Completing a promise with itself does nothing.
  @inlinable public func complete(with future: CoFuture<Value>) {
    guard future !== self else { return }
    future.whenResolved { [self] in resolve($0) }
  }
}

extension CoPromise where Value == Void {
  /// Completes a `CoPromise<Void>`.
  @inlinable public func success() { resolve(.success(())) }
}
