import CovenantCore
import NIOCore
import NIOPosix

extension ServerBootstrap {
  /// Binds a server that serves each connection with a coroutine running `handler`, on the
  /// connection's event loop, in plain sequential code.
  ///
  /// ```swift
  /// let server = try ServerBootstrap(group: group)
  ///   .serverChannelOption(.backlog, value: 256)
  ///   .bindCoroutines(host: "127.0.0.1", port: 6379) { connection in
  ///     while let line = try connection.readLine(maxLength: 4096) {
  ///       try connection.write("+\(line)\r\n")
  ///     }
  ///   }
  /// print("listening on", server.localAddress.port!)
  /// ```
  ///
  /// - The coroutine starts once the connection is active (registered with its loop, able to
  ///   read), never before, and in a turn of the loop: no `execute`. Its `NIOCoroutineChannel`
  ///   reads on demand and flushes its writes when it suspends (see `NIOCoroutineChannel`).
  /// - When `handler` returns or throws, the connection is closed (after what it wrote has been
  ///   sent: `NIOCoroutineChannel.close()`). An error it throws goes, like any uncaught
  ///   coroutine error, to `Coroutine.uncaughtErrorHandler` (cancellation is not reported).
  /// - `channelInitializer` runs first on each new connection's channel, on its loop, to add
  ///   handlers in front of the coroutine's (TLS, codecs): they must turn the channel's bytes
  ///   into `ByteBuffer`s. It replaces the bootstrap's own `childChannelInitializer`; the
  ///   options set with `serverChannelOption` and `childChannelOption` apply as usual, except
  ///   that autoRead is turned off and `allowRemoteHalfClosure` follows `configuration`.
  ///
  /// Call it from a coroutine (it suspends until the socket is bound) or from a thread outside
  /// one (it blocks).
  /// - Throws: what binding throws (an address in use, say).
  public func bindCoroutines(
    host: String, port: Int,
    configuration: NIOCoroutineChannel<ByteBuffer, ByteBuffer>.Configuration = .init(),
    channelInitializer: (@Sendable (any Channel) throws -> Void)? = nil,
    file: StaticString = #fileID, line: UInt = #line,
    _ handler: @escaping @Sendable (NIOCoroutineChannel<ByteBuffer, ByteBuffer>) throws -> Void
  ) throws -> CoroutineServer {
    let connections = CoScope()
    let bootstrap = childChannelInitializer { channel in
      channel.eventLoop.makeCompletedFuture {
        try channelInitializer?(channel)
        let connection = try NIOCoroutineChannel<ByteBuffer, ByteBuffer>(
          wrappingChannelSynchronously: channel, configuration: configuration)
        connection.handler.whenActive = {
          CoroutineServer.start(connection, in: connections, file: file, line: line, handler)
        }
      }
    }
    let channel = try awaitOrWait(bootstrap.bind(host: host, port: port))
    return CoroutineServer(channel: channel, connections: connections)
  }
}
