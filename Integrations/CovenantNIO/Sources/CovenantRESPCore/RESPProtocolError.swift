/// A request that breaks RESP2: the connection gets `-ERR Protocol error: …` and is closed, as
/// Redis does.
public struct RESPProtocolError: Error, Sendable, CustomStringConvertible {
  /// What was wrong, in Redis's words ("invalid multibulk length", …).
  public let reason: String

  /// An error for `reason`.
  public init(_ reason: String) { self.reason = reason }

  /// The error reply's text: `ERR Protocol error: reason`.
  public var description: String { "ERR Protocol error: \(reason)" }
}
