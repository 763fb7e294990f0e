import CovenantCore
import NIOCore

extension NIOCoroutineChannel {
  /// Inside a coroutine: writes `value`. Suspends first while more than the channel's high
  /// watermark waits to be written (a peer that does not read holds the writer back); returns
  /// once the channel has the value. The writes of one turn of the coroutine are flushed
  /// together when it next suspends or returns. A `ByteBuffer` of at most 1 KiB written after
  /// the first of a turn is copied into one buffer of the channel's allocator (the replies to a
  /// batch of pipelined requests leave in one piece), so the caller may reuse or clear its
  /// buffer at once without it being copied on write.
  /// - Throws: `NIOCoroutineChannelError.outputClosed` after `closeOutbound()` or `close()`,
  ///   `.channelClosed` on a closed channel, `CoroutineError.canceled` if the coroutine is
  ///   cancelled while it waits (the value is then not written), and
  ///   `CoroutineError.calledOutsideCoroutine` outside a coroutine.
  public func write(_ value: Outbound) throws {
    try onLoop { handler in
      try handler.awaitWritable()
      handler.write(value)
    }
  }

  /// Inside a coroutine: writes every value of `values` in order, as `write(_:)` does each (so
  /// it may suspend between two of them), flushed together.
  public func write<Values: Sequence>(contentsOf values: Values) throws
  where Values.Element == Outbound {
    try onLoop { handler in
      for value in values {
        try handler.awaitWritable()
        handler.write(value)
      }
    }
  }

  /// Inside a coroutine: closes this side of the connection for writing (half-close). What was
  /// written is sent first, then the output is shut down (a TCP FIN; a TLS close_notify before
  /// it); reading goes on until the peer closes its side. Later writes throw
  /// `NIOCoroutineChannelError.outputClosed`. Does not suspend; calling it again does nothing.
  public func closeOutbound() throws {
    try onLoop { $0.closeOutbound() }
  }

  /// Inside a coroutine: closes the channel. What was written is sent first: `close()` waits
  /// for it (at most `Configuration.drainTimeout`), unlike NIO's `close()`, which drops
  /// unwritten data. Calling it again, or on a channel the peer closed, just closes.
  /// - Throws: `CoroutineError.canceled` if the coroutine is cancelled while it waits for the
  ///   data to leave; the channel is closed at once all the same.
  public func close() throws {
    let drainTimeout = self.drainTimeout
    try onLoop { try $0.close(drainTimeout: drainTimeout) }
  }
}

extension NIOCoroutineChannel where Outbound == ByteBuffer {
  /// Inside a coroutine: writes `string`'s UTF-8 bytes (one buffer from the channel's
  /// allocator), as `write(_:)` does.
  public func write(_ string: String) throws {
    try write(channel.allocator.buffer(string: string))
  }
}
