import CovenantRESPCore
import NIOCore
import Synchronization

/// A subscribed connection of the async/await server: frames go into an `AsyncStream` that a
/// second task of the connection drains into the channel's outbound writer.
final class AsyncSubscriber: RESPSubscriber {
  let frames: AsyncStream<ByteBuffer>
  private let continuation: AsyncStream<ByteBuffer>.Continuation
  /// Bytes pushed and not yet written: past the limit the connection is dropped.
  private let pendingBytes = Atomic<Int>(0)

  init() {
    (frames, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  func push(_ frame: ByteBuffer) {
    let pending = pendingBytes.add(frame.readableBytes, ordering: .relaxed).newValue
    if pending > RESPLimits.maximumPendingPushBytes {
      continuation.finish()  // the writer task ends, and with it the connection
    } else {
      continuation.yield(frame)
    }
  }

  /// Called by the writer task once a frame is written.
  func wrote(_ frame: ByteBuffer) {
    pendingBytes.subtract(frame.readableBytes, ordering: .relaxed)
  }

  /// No more frames: the writer task ends after writing those queued.
  func finish() { continuation.finish() }

  /// Whether the subscriber was dropped for falling behind.
  var overflowed: Bool {
    pendingBytes.load(ordering: .relaxed) > RESPLimits.maximumPendingPushBytes
  }
}
