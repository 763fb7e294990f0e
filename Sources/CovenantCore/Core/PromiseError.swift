/// Errors the promise operators reject with.
public enum PromiseError: Error, Equatable, Sendable {
  /// `timeout(_:)` expired before the promise resolved.
  case timedOut
  /// `validate(_:)`'s predicate returned `false`.
  case validationFailure
}

extension PromiseError {
  /// The `NSError` domain Foundation reports (see `CovenantFoundation`'s `CustomNSError`
  /// conformance): kept here so that the domain and codes are defined next to the cases.
  package static let domain = "dev.covenant.PromiseError"

  /// The `NSError` code: 1 for `timedOut`, 2 for `validationFailure`.
  package var code: Int {
    switch self {
    case .timedOut: return 1
    case .validationFailure: return 2
    }
  }
}
