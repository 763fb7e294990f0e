/// Why a channel operation could not complete.
public enum CoChannelError: Error, Equatable, Sendable {
  /// The channel was closed: sending is refused, and receiving fails once everything sent
  /// before the close has been received.
  case closed
  /// The channel was cancelled: its buffer was dropped and every operation fails.
  case canceled
  /// A stream ended because no element came in time: the end of a receiver made by
  /// `CoChannel.Receiver.timeout(_:)`, reached by every later receive (and passed on by the
  /// stages downstream of it).
  case timeout
}

extension CoChannelError: CancellationReporting {
  var reportsCancellation: Bool { self == .canceled }
}
