/// Errors of `CoFuture` operations.
public enum CoFutureError: Error, Equatable, Sendable {
  /// The future was cancelled (or deallocated while pending).
  case canceled
  /// `await(timeout:)` expired; the future itself is not cancelled.
  case timeout
}

extension CoFutureError: CancellationReporting {
  var reportsCancellation: Bool { self == .canceled }
}
