import Covenant

/// The outcome of a promise in the reference model: a value, an error code, or never resolved.
/// Library errors are mapped to fixed codes so that outcomes compare exactly.
public enum ModelOutcome: Hashable, Sendable, CustomStringConvertible {
  case value(Int)
  case error(Int)
  case never

  /// `PromiseError.validationFailure`.
  public static let validationFailure = ModelOutcome.error(9001)
  /// `PromiseError.timedOut`.
  public static let timedOut = ModelOutcome.error(9002)
  /// `CoFutureError.canceled`.
  public static let canceled = ModelOutcome.error(9003)
  /// `CoFutureError.timeout`.
  public static let futureTimeout = ModelOutcome.error(9004)

  /// The outcome a `Result` stands for.
  public init(_ result: Result<Int, any Error>) {
    switch result {
    case .success(let value): self = .value(value)
    case .failure(let error): self = .error(ModelOutcome.code(of: error))
    }
  }

  /// The code of a model or library error; -1 for anything unexpected.
  public static func code(of error: any Error) -> Int {
    switch error {
    case let error as ModelError: return error.code
    case PromiseError.validationFailure: return 9001
    case PromiseError.timedOut: return 9002
    case CoFutureError.canceled: return 9003
    case CoFutureError.timeout: return 9004
    case CoroutineError.canceled: return 9005
    case CoroutineError.calledOutsideCoroutine: return 9006
    case CoChannelError.closed: return 9007
    case CoChannelError.canceled: return 9008
    default: return -1
    }
  }

  /// As a `Result` (for resolving promises in the program).
  public var result: Result<Int, any Error>? {
    switch self {
    case .value(let value): return .success(value)
    case .error(let code): return .failure(ModelError(code: code))
    case .never: return nil
    }
  }

  /// Whether this is an error outcome.
  public var isError: Bool { if case .error = self { true } else { false } }

  /// Short text for failure messages.
  public var description: String {
    switch self {
    case .value(let value): "value(\(value))"
    case .error(let code): "error(\(code))"
    case .never: "never"
    }
  }
}

/// The errors the random programs raise themselves.
public struct ModelError: Error, Hashable, Sendable {
  /// Identifies the error in the model.
  public let code: Int
  /// An error with `code`.
  public init(code: Int) { self.code = code }
}
