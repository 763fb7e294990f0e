import NIOCore

extension NIOCoroutineChannel {
  /// How a `NIOCoroutineChannel` reads ahead, holds writes back and closes.
  ///
  /// Sizes count bytes when the values are `ByteBuffer`s and values otherwise.
  ///
  /// ```swift
  /// var configuration = NIOCoroutineChannel<ByteBuffer, ByteBuffer>.Configuration()
  /// configuration.inboundHighWatermark = 64 * 1024   // read ahead up to 64 KiB
  /// ```
  public struct Configuration: Sendable {
    /// The socket is read while fewer than this many bytes (or values) are buffered and not yet
    /// taken by a read, even when no reader waits (read-ahead). A waiting reader always gets
    /// the socket read. Default 1: read ahead only while nothing is buffered.
    public var inboundLowWatermark: Int = 1

    /// Once reading ahead, the socket is read until this many bytes (or values) are buffered.
    /// Default 1. The buffer may exceed it by one read of NIO's (up to `maxMessagesPerRead`
    /// receive buffers), never more: a reader slower than its peer holds the peer back through
    /// TCP's flow control.
    public var inboundHighWatermark: Int = 1

    /// The channel's write buffer watermarks (NIO's `writeBufferWaterMark` option): a write
    /// suspends while more than `high` bytes wait to be written, until they fall below `low`.
    /// `nil` (the default) leaves the channel's setting (NIO's default: 32 KiB and 64 KiB).
    public var outboundWatermarks: ChannelOptions.Types.WriteBufferWaterMark? = nil

    /// Whether the peer may close its side of the connection while this side goes on writing
    /// (NIO's `allowRemoteHalfClosure`): `read()` then returns `nil` and writes still work.
    /// Default `true`. With `false`, the end of input closes the whole channel.
    public var isRemoteHalfClosureAllowed: Bool = true

    /// How long `close()` waits for what was written to be sent before it closes the channel
    /// anyway (a peer that stopped reading must not keep a closing connection forever).
    /// Default 10 seconds.
    public var drainTimeout: TimeAmount = .seconds(10)

    /// The default configuration.
    public init() {}
  }
}
