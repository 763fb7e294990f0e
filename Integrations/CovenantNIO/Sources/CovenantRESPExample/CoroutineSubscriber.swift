import CovenantNIO
import CovenantRESPCore
import NIOCore
import Synchronization

/// A subscribed connection of the coroutine server. Published messages arrive on other
/// connections' threads while the connection's own coroutine waits in a read, so frames go
/// into an outbox (`CoChannel`, unbounded, bounded in bytes here), and a second coroutine of
/// the connection, on the same event loop, writes them in order. From the first SUBSCRIBE on it
/// is the connection's only writer (see `RESPSubscriber`).
///
/// Why a second coroutine rather than one coroutine `select`ing on the outbox and the socket:
/// a read is not a channel operation a `select` can wait on, and two sequential loops — one
/// reading commands, one writing frames — say what the connection does more plainly.
final class CoroutineSubscriber: RESPSubscriber {
  private let outbox = CoChannel<ByteBuffer>()
  /// Bytes pushed and not yet written: past the limit the connection is dropped.
  private let pendingBytes = Atomic<Int>(0)

  func push(_ frame: ByteBuffer) {
    let pending = pendingBytes.add(frame.readableBytes, ordering: .relaxed).newValue
    if pending > RESPLimits.maximumPendingPushBytes {
      outbox.cancel()  // the writer stops and closes the connection
    } else {
      _ = outbox.offer(frame)
    }
  }

  /// The writer coroutine's body: writes every frame, in order, until `finish()` (then returns
  /// once the outbox is drained) or the subscriber falls too far behind (then closes the
  /// connection, which ends its reads too).
  func writeFrames(to connection: NIOCoroutineChannel<ByteBuffer, ByteBuffer>) throws {
    while true {
      let frame: ByteBuffer
      do {
        frame = try outbox.awaitReceive()
      } catch CoChannelError.closed {
        return
      } catch CoChannelError.canceled {
        try connection.close()
        return
      }
      try connection.write(frame)
      pendingBytes.subtract(frame.readableBytes, ordering: .relaxed)
    }
  }

  /// No more frames: the writer returns after writing those queued.
  func finish() { _ = outbox.close() }
}
