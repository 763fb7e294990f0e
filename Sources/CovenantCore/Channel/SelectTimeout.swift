import Dispatch

/// The `onTimeout` of a select: how long it may wait, and what runs when it has waited that long.
@usableFromInline
struct SelectTimeout<Output> {
  @usableFromInline let interval: DispatchTimeInterval
  @usableFromInline let body: () throws -> Output

  @inlinable init(interval: DispatchTimeInterval, body: @escaping () throws -> Output) {
    self.interval = interval
    self.body = body
  }
}

/// When a select's `timeout` ends, kept by a select that may have to wait again after a stage
/// dropped what a case received: the time left, on the clock of the scheduler's timers.
@usableFromInline
struct SelectDeadline {
  @usableFromInline let total: UInt64?
  @usableFromInline let start: UInt64

  /// The deadline of `timeout` from now (none for `.never`).
  @usableFromInline init(_ timeout: DispatchTimeInterval, from coroutine: CoroutineHandle) {
    total = timeout.clampedNanoseconds
    start = total == nil ? 0 : coroutine.clockNanoseconds()
  }

  /// What is left of the timeout now (`.never` for none).
  @usableFromInline func remaining(for coroutine: CoroutineHandle) -> DispatchTimeInterval {
    guard let total else { return .never }
    let elapsed = coroutine.clockNanoseconds() &- start
    return .nanoseconds(Int(clamping: total > elapsed ? total - elapsed : 0))
  }
}
