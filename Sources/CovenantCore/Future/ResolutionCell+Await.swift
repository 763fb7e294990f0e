import Dispatch

extension ResolutionCell {
  /// The `await()` of `Promise` and `CoFuture`: the value (or error) at once when the cell is
  /// resolved — one atomic load, no lock — else suspends the current coroutine until it is, with
  /// the coroutine's own reusable registration in the cell (no closure, no node).
  ///
  /// - Throws: the rejection error; `CoroutineError.calledOutsideCoroutine` when pending and
  ///   not in a coroutine; `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  ///
  /// `owner` is the promise's or future's type, for coroutine snapshots (evaluated only when
  /// the await suspends).
  @inlinable func awaitValue<Value>(
    as type: Value.Type, awaiting owner: @autoclosure () -> Any.Type
  ) throws -> Value {
    switch currentStatus {
    case CellStatus.fulfilled: return loadValue(as: type)
    case CellStatus.rejected: throw loadError()
    default:
      try CoroutineHandle.awaitCurrent(resolutionOf: self, awaiting: owner())
      return try resolvedResult(as: type).get()
    }
  }

  /// `awaitValue(as:)` that gives up after `timeout`, throwing `CoFutureError.timeout`: the
  /// `await(timeout:)` of `Promise` and `CoFuture`.
  @inlinable func awaitValue<Value>(
    as type: Value.Type, awaiting owner: @autoclosure () -> Any.Type,
    timeout: DispatchTimeInterval
  ) throws -> Value {
    switch currentStatus {
    case CellStatus.fulfilled: return loadValue(as: type)
    case CellStatus.rejected: throw loadError()
    default:
      if try CoroutineHandle.awaitCurrent(resolutionOf: self, awaiting: owner(), timeout: timeout) {
        throw CoFutureError.timeout
      }
      return try resolvedResult(as: type).get()
    }
  }
}
