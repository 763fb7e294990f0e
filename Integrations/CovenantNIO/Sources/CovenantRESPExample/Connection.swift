import CovenantNIO
import CovenantRESPCore
import NIOCore

/// Serves one connection, in its own coroutine on the connection's event loop: read a command,
/// run it, write the reply, and again — until the peer closes, sends QUIT or breaks the
/// protocol. The writes of a batch of pipelined commands leave in one system call, when the
/// coroutine next waits for input.
func serve(
  _ connection: NIOCoroutineChannel<ByteBuffer, ByteBuffer>, store: RESPStore, pubsub: RESPPubSub
) throws {
  var subscriber: CoroutineSubscriber?
  var writer: CoFuture<Void>?
  var session = RESPSession(store: store, pubsub: pubsub) {
    let made = CoroutineSubscriber()
    subscriber = made
    return made
  }
  defer {
    session.end()
    subscriber?.finish()
  }
  var arguments: [ByteBuffer] = []
  var out = connection.channel.allocator.buffer(capacity: 0)
  while true {
    let keepOpen: Bool
    do {
      let command = try connection.readCommand(into: &arguments)
      // Cleared after the read: a read that waited ended the turn, which flushed the last
      // reply, so the socket has let go of the buffer and `clear()` reuses it (before the read
      // it is still held, and `clear()` allocates a new one). Commands already buffered
      // (pipelined) come without a wait: their replies do allocate (see the README).
      out.clear()
      guard command else { break }
      keepOpen = session.execute(arguments, into: &out)
    } catch let error as RESPProtocolError {  // answered, then the connection closes
      out.clear()
      out.writeRESPError(error.description)
      keepOpen = false
    }
    // The arguments are slices of the received buffer: let it go before the next read, so
    // NIO can read into it again instead of allocating another.
    arguments.removeAll(keepingCapacity: true)
    if writer == nil, let subscriber {  // the first SUBSCRIBE: frames from now on go through it
      writer = connection.channel.eventLoop.coroutineFuture(name: "RESP subscriber writer") {
        try subscriber.writeFrames(to: connection)
      }
    }
    if out.readableBytes > 0 { try connection.write(out) }
    if !keepOpen { break }
  }
  session.end()
  subscriber?.finish()
  try writer?.await()  // its last frames (QUIT's +OK) are written before the connection closes
}
