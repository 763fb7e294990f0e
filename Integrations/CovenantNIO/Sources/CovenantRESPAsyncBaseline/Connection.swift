import CovenantRESPCore
import NIOCore

/// Serves one connection from a Swift task: commands come from the decoder through the
/// inbound stream, replies go out through the outbound writer. Once the connection subscribes,
/// a second task writes the subscriber's frames (replies and published messages, in order).
func serve(
  _ connection: NIOAsyncChannel<RESPRequest, ByteBuffer>, store: RESPStore, pubsub: RESPPubSub
) async throws {
  try await connection.executeThenClose { inbound, outbound in
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      var subscriber: AsyncSubscriber?
      var session = RESPSession(store: store, pubsub: pubsub) {
        let made = AsyncSubscriber()
        subscriber = made
        return made
      }
      defer {
        session.end()
        subscriber?.finish()
      }
      var out = connection.channel.allocator.buffer(capacity: 1024)
      requests: for try await request in inbound {
        out.clear()
        let keepOpen: Bool
        switch request {
        case .command(let arguments):
          let wasSubscribed = session.subscriber != nil
          keepOpen = session.execute(arguments, into: &out)
          if !wasSubscribed, let subscriber {
            tasks.addTask {  // from now on the only writer of the connection
              for await frame in subscriber.frames {
                try await outbound.write(frame)
                subscriber.wrote(frame)
              }
              if subscriber.overflowed { throw RESPProtocolError("pub/sub output limit") }
            }
          }
        case .protocolError(let error):
          out.writeRESPError(error.description)
          keepOpen = false
        }
        if out.readableBytes > 0 { try await outbound.write(out) }
        if !keepOpen { break requests }
      }
      session.end()
      subscriber?.finish()
      try await tasks.waitForAll()
    }
  }
}
