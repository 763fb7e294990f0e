/// What a `select` case runs once it is the case performed, given the operation's outcome.
@usableFromInline
enum SelectCaseBody<Value, Output> {
  /// `onReceive`: the element; an error outcome is thrown by `select` instead.
  case value((Value) throws -> Output)
  /// `onReceiveResult`: the outcome itself, error included.
  case result((Result<Value, CoChannelError>) throws -> Output)
  /// `onSend`: nothing; an error outcome is thrown by `select` instead.
  case plain(() throws -> Output)

  /// Runs the body for `outcome`. (Always inlined: small, and on `select`'s fast path, where
  /// the inliner, counting every specialization in a client, may otherwise leave it a call.)
  @inlinable @inline(__always)
  func run(with outcome: Result<Value, CoChannelError>) throws -> Output {
    switch self {
    case .value(let body): return try body(outcome.get())
    case .result(let body): return try body(outcome)
    case .plain(let body):
      _ = try outcome.get()
      return try body()
    }
  }
}

/// What the body of a case kept on behalf of a derived receiver throws when the receiver's
/// stage dropped what the case received (a `filter` that rejected it): the case was not
/// performed after all, and the select goes on (`SelectSlotOperations.complete` answers `nil`).
/// Only those bodies throw it, and only kept cases run them, so `select`'s fast path (a case
/// performed as it is added) never meets it.
@usableFromInline
struct StageDroppedElement: Error {
  @inlinable init() {}
}
