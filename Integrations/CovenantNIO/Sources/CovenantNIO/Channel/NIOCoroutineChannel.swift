import CovenantCore
import NIOCore

/// A NIO `Channel` read and written by coroutines in plain sequential code, as Go's `net.Conn`:
/// `read()` suspends the coroutine until a value arrives, `write(_:)` suspends it while the
/// peer is not keeping up, and neither ever blocks the event loop.
///
/// ```swift
/// let server = try ServerBootstrap(group: group).bindCoroutines(host: "127.0.0.1", port: 0) {
///   connection in
///   while let line = try connection.readLine(maxLength: 1024) {   // one coroutine per connection
///     try connection.write("you said: \(line)\n")
///   }
/// }
/// ```
///
/// ## Threading
/// Call its methods from a coroutine (any scheduler). Its state lives on the channel's event
/// loop: a coroutine running on that loop (`channel.eventLoop.startCoroutine`, the connection
/// coroutines of `bindCoroutines`) uses it without any thread hop; a coroutine on another
/// scheduler hops to the loop and back for each call (two `execute`s). Outside a coroutine the
/// methods throw `CoroutineError.calledOutsideCoroutine`. One coroutine reads at a time (a
/// second concurrent reader gets `NIOCoroutineChannelError.concurrentRead`); any number write.
///
/// ## Reading on demand
/// The channel is read (autoRead is off) only while a reader waits or fewer than
/// `Configuration.inboundLowWatermark` bytes (values) are buffered, so a slow reader holds a
/// fast peer back through TCP instead of buffering without bound. Nothing is preallocated:
/// an idle connection whose coroutine waits in `read()` holds no buffer of its own.
///
/// ## Writing
/// `write(_:)` hands the value to the channel and returns; it suspends first while more than
/// the channel's high watermark waits to be written (`Configuration.outboundWatermarks`).
/// Writes are flushed when the coroutine's turn of the loop ends — when it suspends (in a read,
/// any `await`) or returns — so the many small writes of one request leave in one system call.
/// A write after `closeOutbound()`/`close()` throws `NIOCoroutineChannelError.outputClosed`,
/// on a channel closed otherwise `.channelClosed`. A write that NIO fails later (the peer reset
/// the connection) closes the channel; the next call reports it.
///
/// ## Cancellation and timeouts
/// A read or write pending in a cancelled coroutine throws `CoroutineError.canceled` at once.
/// Nothing that arrived is lost: it stays buffered for the next read, and the channel stays
/// usable. `read(timeout:)` throws `NIOCoroutineChannelError.readTimeout` the same way.
///
/// ## Closing
/// `close()` sends what was written, waiting for it at most `Configuration.drainTimeout`,
/// then closes the channel (NIO's own `close()` drops unwritten data); `closeOutbound()` shuts
/// only this side down after the data (a TCP FIN), and reads go on.
public struct NIOCoroutineChannel<Inbound: Sendable, Outbound: Sendable>: Sendable {
  /// The wrapped channel (for its addresses, options, allocator or event loop).
  public let channel: any Channel

  /// The channel's handler; its state is confined to the channel's event loop.
  let handler: CoroutineChannelHandler<Inbound, Outbound>
  let drainTimeout: TimeAmount

  /// Wraps `channel`: adds the handler that feeds the coroutines at the end of its pipeline,
  /// turns NIO's autoRead off (reads happen on demand) and applies `configuration`.
  ///
  /// Call it on the channel's event loop, e.g. in a channel initializer, after the handlers that
  /// turn bytes into `Inbound` values (TLS, decoders). Wrapping a channel that is not active yet
  /// is fine: reads wait for it to become active.
  /// - Throws: what setting the channel's options or adding the handler throws.
  /// - Precondition: on `channel.eventLoop`.
  public init(
    wrappingChannelSynchronously channel: any Channel, configuration: Configuration = .init()
  ) throws {
    channel.eventLoop.preconditionInEventLoop()
    if let options = channel.syncOptions {
      try options.setOption(.autoRead, value: false)
      try options.setOption(
        .allowRemoteHalfClosure, value: configuration.isRemoteHalfClosureAllowed)
      if let watermarks = configuration.outboundWatermarks {
        try options.setOption(.writeBufferWaterMark, value: watermarks)
      }
    }
    let handler = CoroutineChannelHandler<Inbound, Outbound>(
      scheduler: channel.eventLoop.coroutineScheduler,
      lowWatermark: configuration.inboundLowWatermark,
      highWatermark: configuration.inboundHighWatermark)
    try channel.pipeline.syncOperations.addHandler(handler)
    self.channel = channel
    self.handler = handler
    self.drainTimeout = configuration.drainTimeout
  }

  /// Runs `body` with the handler on the channel's event loop, from the calling coroutine: at
  /// once when the coroutine runs on that loop, else after a hop there (and back afterwards).
  @inline(__always)
  func onLoop<T>(_ body: (CoroutineChannelHandler<Inbound, Outbound>) throws -> T) throws -> T {
    let handler = self.handler
    if Coroutine.isRunning(on: handler.scheduler) { return try body(handler) }
    return try handler.scheduler.await { try body(handler) }
  }
}
