import CovenantCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

extension ClientBootstrap {
  /// Connects to `host`:`port` and returns the connection as a `NIOCoroutineChannel`: inside a
  /// coroutine it suspends until connected, outside one it blocks.
  ///
  /// ```swift
  /// loop.startCoroutine {
  ///   let connection = try ClientBootstrap(group: loop).connectCoroutine(host: "127.0.0.1", port: 6379)
  ///   try connection.write("PING\r\n")
  ///   print(try connection.readLine() ?? "closed")   // +PONG
  /// }
  /// ```
  ///
  /// `channelInitializer` runs first on the new channel, on its loop, to add handlers in front
  /// (TLS, codecs); it replaces the bootstrap's own `channelInitializer`. The bootstrap's
  /// `channelOption`s apply, except that autoRead is turned off and `allowRemoteHalfClosure`
  /// follows `configuration`.
  /// - Throws: what connecting throws (a refused connection: NIO's `NIOConnectionError` or
  ///   `IOError`), `CoroutineError.canceled` if the coroutine is cancelled meanwhile (the
  ///   connection attempt itself goes on, and its channel is closed when it succeeds).
  public func connectCoroutine(
    host: String, port: Int,
    configuration: NIOCoroutineChannel<ByteBuffer, ByteBuffer>.Configuration = .init(),
    channelInitializer: (@Sendable (any Channel) throws -> Void)? = nil
  ) throws -> NIOCoroutineChannel<ByteBuffer, ByteBuffer> {
    let made = NIOLockedValueBox<NIOCoroutineChannel<ByteBuffer, ByteBuffer>?>(nil)
    let connecting =
      self
      .channelOption(.autoRead, value: false)
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channelInitializer?(channel)
          let connection = try NIOCoroutineChannel<ByteBuffer, ByteBuffer>(
            wrappingChannelSynchronously: channel, configuration: configuration)
          made.withLockedValue { $0 = connection }
        }
      }
      .connect(host: host, port: port)
    do {
      _ = try awaitOrWait(connecting)
    } catch {
      if error as? CoroutineError == .canceled {
        connecting.whenSuccess { $0.close(promise: nil) }
      }
      throw error
    }
    // The initializer ran before the connect future succeeded.
    return made.withLockedValue { $0 }!
  }
}
