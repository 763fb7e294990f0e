import CovenantCore
import NIOCore

/// A server whose every connection is served by a coroutine (`ServerBootstrap.bindCoroutines`).
///
/// The connections' coroutines run in a `CoScope` the server owns. Stopping:
/// - `close()` stops accepting; the connections already open go on.
/// - `shutdown(gracePeriod:)` stops accepting, lets the open connections finish for up to
///   `gracePeriod`, then cancels the ones still running (their pending reads and writes throw
///   `CoroutineError.canceled`, their channels close) and returns once every connection
///   coroutine has ended.
///
/// Both can be called from a coroutine (they suspend it) or from any thread outside one (they
/// block it) — but not outside a coroutine on one of the server's event loops, whose work they
/// wait for.
public final class CoroutineServer: Sendable {
  /// The listening channel (its `closeFuture` completes when the server stops accepting).
  public let channel: any Channel

  /// The address the server listens on (with the port the system chose for port 0).
  public let localAddress: SocketAddress

  /// The scope of the connections' coroutines.
  let connections: CoScope

  init(channel: any Channel, connections: CoScope) {
    self.channel = channel
    // A bound server channel always has a local address.
    self.localAddress = channel.localAddress!
    self.connections = connections
  }

  /// Stops accepting connections; open connections go on. Returns once the listening socket is
  /// closed. Calling it again does nothing.
  public func close() throws {
    do {
      try awaitOrWait(channel.close())
    } catch ChannelError.alreadyClosed {
      return
    }
  }

  /// Stops accepting connections, gives the open ones `gracePeriod` to finish, cancels those
  /// still running, and returns once every connection's coroutine has ended.
  ///
  /// ```swift
  /// try server.shutdown(gracePeriod: .seconds(5))   // e.g. on SIGTERM
  /// ```
  /// - Throws: `CoroutineError.canceled` if the calling coroutine is cancelled while it waits.
  public func shutdown(gracePeriod: Duration) throws {
    try shutdown(gracePeriod: TimeAmount(saturating: gracePeriod))
  }

  /// `shutdown(gracePeriod:)` with a NIO `TimeAmount`.
  @_disfavoredOverload
  public func shutdown(gracePeriod: TimeAmount) throws {
    try close()
    let grace = max(.zero, min(gracePeriod, .hours(24 * 365 * 100)))
    connections.cancel(after: .nanoseconds(Int(grace.nanoseconds)))
    try connections.join()
    // Connections accepted in the last instant start cancelled (see `start`); join them too.
    connections.cancel()
    try connections.join()
  }

  /// Starts `handler`'s coroutine for `connection`, on its event loop, in `connections` (called
  /// once the channel is active, inside a turn of the loop, so it starts right there).
  static func start(
    _ connection: NIOCoroutineChannel<ByteBuffer, ByteBuffer>, in connections: CoScope,
    file: StaticString, line: UInt,
    _ handler: @escaping @Sendable (NIOCoroutineChannel<ByteBuffer, ByteBuffer>) throws -> Void
  ) {
    if connections.isCanceled {
      connection.channel.close(promise: nil)
      return
    }
    let scheduler: any CoroutineScheduler = connection.handler.scheduler
    scheduler.startCoroutine(in: connections, name: nil, file: file, line: line) {
      // Started in a scope cancelled meanwhile (a shutdown that may have joined already):
      // the handler never runs after `shutdown` returned.
      if Coroutine.isCanceled {
        connection.channel.close(promise: nil)
        return
      }
      do {
        try handler(connection)
      } catch {
        try? connection.close()
        throw error
      }
      try connection.close()
    }
  }
}

/// Inside a coroutine, suspends until `future` completes; outside one, blocks until it does.
func awaitOrWait<Value: Sendable>(_ future: EventLoopFuture<Value>) throws -> Value {
  if Coroutine.isInsideCoroutine { return try future.await() }
  return try future.wait()
}
