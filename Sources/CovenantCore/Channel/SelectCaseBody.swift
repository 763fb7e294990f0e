/// What a `select` case runs once it is the case performed, given the operation's outcome.
@usableFromInline
enum SelectCaseBody<Value, Output> {
  /// `onReceive`: the element; an error outcome is thrown by `select` instead.
  case value((Value) throws -> Output)
  /// `onReceiveResult`: the outcome itself, error included.
  case result((Result<Value, CoChannelError>) throws -> Output)
  /// `onSend`: nothing; an error outcome is thrown by `select` instead.
  case plain(() throws -> Output)

  /// Runs the body for `outcome`.
  @inlinable
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
