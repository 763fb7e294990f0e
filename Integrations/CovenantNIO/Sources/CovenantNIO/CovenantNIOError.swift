/// Errors of the CovenantNIO bridges.
public enum CovenantNIOError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A Covenant `Promise` converted with `eventLoopFuture(on:)` was deallocated while still
  /// pending, so nothing can ever resolve the `EventLoopFuture`.
  case promiseAbandoned

  /// Describes the error.
  public var description: String {
    switch self {
    case .promiseAbandoned:
      "CovenantNIO: the Promise behind this EventLoopFuture was deallocated while pending"
    }
  }
}
