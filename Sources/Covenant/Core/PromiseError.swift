import Foundation

/// Errors the promise operators reject with.
public enum PromiseError: Error, Equatable, Sendable {
  /// `timeout(_:)` expired before the promise resolved.
  case timedOut
  /// `validate(_:)`'s predicate returned `false`.
  case validationFailure
}

extension PromiseError: CustomNSError {
  /// `"dev.covenant.PromiseError"`.
  public static var errorDomain: String { "dev.covenant.PromiseError" }

  /// 1 for `timedOut`, 2 for `validationFailure`.
  public var errorCode: Int {
    switch self {
    case .timedOut: return 1
    case .validationFailure: return 2
    }
  }
}
