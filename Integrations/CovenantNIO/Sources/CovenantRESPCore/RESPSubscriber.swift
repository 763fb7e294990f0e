import NIOCore

/// A subscribed connection, as the pub/sub registry sees it: something that takes frames to
/// write, in order, from any thread, without waiting.
///
/// Once a connection has subscribed, *every* frame it writes goes through `push` — replies to
/// its own commands as well as published messages — so that one queue decides their order: a
/// SUBSCRIBE's confirmation is pushed before the subscription is registered, and so precedes
/// every message published to the channel after it.
public protocol RESPSubscriber: AnyObject, Sendable {
  /// Queues `frame` (one or more complete RESP replies) for the connection. Never blocks; a
  /// subscriber that falls too far behind (`RESPLimits.maximumPendingPushBytes`) drops the
  /// frame and is disconnected, as Redis disconnects a pub/sub client over its output limit.
  func push(_ frame: ByteBuffer)
}
