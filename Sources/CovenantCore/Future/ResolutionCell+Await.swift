import Dispatch

extension ResolutionCell {
  /// The `await()` of `Promise` and `CoFuture`: the value (or error) at once when the cell is
  /// resolved — one atomic load, no lock — else suspends the current coroutine until it is, with
  /// the coroutine's own reusable registration in the cell (no closure, no node).
  ///
  /// - Throws: the rejection error; `CoroutineError.calledOutsideCoroutine` when pending and
  ///   not in a coroutine; `CoroutineError.canceled` if the coroutine is cancelled meanwhile.
  @inlinable func awaitValue<Value>(as type: Value.Type) throws -> Value {
    switch currentStatus {
    case CellStatus.fulfilled: return loadValue(as: type)
    case CellStatus.rejected: throw loadError()
    default:
      try CoroutineHandle.awaitCurrent(resolutionOf: self)
      return try resolvedResult(as: type).get()
    }
  }

  /// `awaitValue(as:)` that gives up after `timeout`, throwing `CoFutureError.timeout`: the
  /// `await(timeout:)` of `Promise` and `CoFuture`.
  @inlinable func awaitValue<Value>(
    as type: Value.Type, timeout: DispatchTimeInterval
  ) throws -> Value {
    switch currentStatus {
    case CellStatus.fulfilled: return loadValue(as: type)
    case CellStatus.rejected: throw loadError()
    default:
      try CoroutineHandle.awaitCurrent(resolutionOf: self, timeout: timeout)
      return try resolvedResult(as: type).get()
    }
  }
}
