/// What a `select` case runs once it is the case performed, given the operation's outcome.
@usableFromInline
enum SelectCaseBody<Value, Output> {
  /// `onReceive`: the element; an error outcome is thrown by `select` instead.
  case value((Value) throws -> Output)
  /// `onReceiveResult`: the outcome itself, error included.
  case result((Result<Value, CoChannelError>) throws -> Output)
  /// `onSend`: nothing; an error outcome is thrown by `select` instead.
  case plain(() throws -> Output)
  /// A receive case on a derived receiver, kept on the channel it reads from: the stage runs on
  /// the outcome, then the case's own body. `nil` when the stage dropped the element (a
  /// `filter` that rejected it): the case was not performed after all, and the select goes on
  /// waiting.
  case staged((Result<Value, CoChannelError>) throws -> Output?)

  /// Runs the body for `outcome`; `nil` if a stage dropped the element (only a `staged` body
  /// returns `nil`).
  @inlinable
  func run(with outcome: Result<Value, CoChannelError>) throws -> Output? {
    switch self {
    case .value(let body): return try body(outcome.get())
    case .result(let body): return try body(outcome)
    case .plain(let body):
      _ = try outcome.get()
      return try body()
    case .staged(let body): return try body(outcome)
    }
  }
}
