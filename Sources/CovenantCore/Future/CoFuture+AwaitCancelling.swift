import Dispatch

extension CoFuture {
  /// `await()` that can pass the coroutine's cancellation on to the future (coswift's `await`):
  /// with `cancellingOnCancel: true`, if the awaiting coroutine is cancelled before the future
  /// completes, the future is cancelled too — it fails with `CoFutureError.canceled`, its
  /// `whenCanceled` callbacks run (the place to stop the work), and what it was derived from is
  /// cancelled as `cancel()` does (the coroutine of `coroutineFuture`, the wrapped `Promise`).
  /// With `false` it is exactly `await()`.
  ///
  /// ```swift
  /// let download = CoPromise<Data>()
  /// let task = session.load(url) { download.complete(with: $0) }
  /// download.whenCanceled { task.stop() }                // the work stops with the coroutine
  /// scheduler.startCoroutine(in: scope) {
  ///   let data = try download.await(cancellingOnCancel: true)
  /// }
  /// scope.cancel()                                      // cancels the coroutine, then `download`
  /// ```
  ///
  /// **Why not by default.** `await()` leaves the future alone, as Kotlin's `Deferred.await()`
  /// does: a future is a value anyone may hold and several coroutines may await, and one
  /// waiter giving up must not fail it for the others, nor may a plain read have an effect on
  /// the work. Pass `true` where this coroutine owns the work it awaits (it made the future for
  /// itself), which is what coswift's `await` assumed of every promise.
  ///
  /// A future already complete returns its value, even in a cancelled coroutine, and is never
  /// cancelled. A timeout (`await(timeout:cancellingOnCancel:)`) does not cancel the future;
  /// only the coroutine's cancellation does.
  ///
  /// - Throws: as `await()`: the future's error, `CoroutineError.canceled` when the coroutine
  ///   is cancelled (after the future has been cancelled, if asked),
  ///   `CoroutineError.calledOutsideCoroutine` when pending outside a coroutine (the future
  ///   is then left alone).
  public func await(cancellingOnCancel: Bool) throws -> Value {
    do {
      return try self.await()
    } catch {
      if cancellingOnCancel, Coroutine.isCanceled { cancel() }
      throw error
    }
  }

  /// `await(timeout:)` that passes the coroutine's cancellation on to the future, as
  /// `await(cancellingOnCancel:)` does. The timeout itself never cancels the future.
  public func await(timeout: DispatchTimeInterval, cancellingOnCancel: Bool) throws -> Value {
    do {
      return try self.await(timeout: timeout)
    } catch {
      if cancellingOnCancel, Coroutine.isCanceled { cancel() }
      throw error
    }
  }
}

extension Promise {
  /// `await()` that can pass the coroutine's cancellation on to the promise, as
  /// `CoFuture.await(cancellingOnCancel:)` does: with `true`, a coroutine cancelled while it
  /// waits rejects the promise with `CoFutureError.canceled` (the rejection a cancelled
  /// `CoFuture` gives the promise it wraps), so a `catch` or `recover` chained on it sees the
  /// cancellation and can stop the work. Not by default, for the reasons given there: a promise
  /// may have other observers.
  ///
  /// ```swift
  /// let user = try fetchUser(id).await(cancellingOnCancel: true)
  /// ```
  public func await(cancellingOnCancel: Bool) throws -> Value {
    do {
      return try self.await()
    } catch {
      if cancellingOnCancel, Coroutine.isCanceled { reject(CoFutureError.canceled) }
      throw error
    }
  }

  /// `await(timeout:)` that passes the coroutine's cancellation on to the promise, as
  /// `await(cancellingOnCancel:)` does. The timeout itself never rejects the promise.
  public func await(timeout: DispatchTimeInterval, cancellingOnCancel: Bool) throws -> Value {
    do {
      return try self.await(timeout: timeout)
    } catch {
      if cancellingOnCancel, Coroutine.isCanceled { reject(CoFutureError.canceled) }
      throw error
    }
  }
}
