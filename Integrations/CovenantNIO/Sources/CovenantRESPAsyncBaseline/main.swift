import CovenantRESPCore
import NIOCore
import NIOPosix

// CovenantRESPAsyncBaseline: the RESP server of CovenantRESPExample written with Swift
// async/await on swift-nio's NIOAsyncChannel — one task per connection, a ByteToMessageDecoder
// for the requests — over the same store, registry and command code, for the comparison.
//
//   swift run -c release --package-path Integrations/CovenantNIO CovenantRESPAsyncBaseline \
//     --port 6380
//   redis-cli -p 6380 ping
//
// Flags: --host (default 127.0.0.1), --port (default 6379; 0: any, printed), --threads (event
// loops; default: cores). Its first line of output is `listening on PORT`.

let options = RESPServerOptions(
  CommandLine.arguments, program: "CovenantRESPAsyncBaseline", defaultThreads: System.coreCount)
let group = MultiThreadedEventLoopGroup(numberOfThreads: options.threads)
let store = RESPStore()
let pubsub = RESPPubSub()

let server = try await ServerBootstrap(group: group)
  .serverChannelOption(.backlog, value: 1024)
  .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
  .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
  .bind(host: options.host, port: options.port) { channel in
    channel.eventLoop.makeCompletedFuture {
      try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPCommandDecoder()))
      return try NIOAsyncChannel<RESPRequest, ByteBuffer>(wrappingChannelSynchronously: channel)
    }
  }

RESPServerOptions.announce(port: server.channel.localAddress?.port ?? options.port)

try await withThrowingDiscardingTaskGroup { connections in
  try await server.executeThenClose { inbound in
    for try await connection in inbound {
      connections.addTask {
        try? await serve(connection, store: store, pubsub: pubsub)
      }
    }
  }
}
