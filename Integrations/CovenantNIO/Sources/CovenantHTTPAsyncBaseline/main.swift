import NIOCore
import NIOHTTP1
import NIOPosix

// CovenantHTTPAsyncBaseline: the same HTTP handler as CovenantHTTPExample, written with Swift
// async/await on NIO's async APIs (NIOAsyncChannel), for the load comparison.
//
//   swift run -c release --package-path Integrations/CovenantNIO CovenantHTTPAsyncBaseline 8081
//
// Arguments: [port (default 8081)] [event loop threads (default: number of cores)]
// Listens on 127.0.0.1 only.
#if canImport(Glibc)
  import Glibc
#else
  import Darwin
#endif

let arguments = CommandLine.arguments.dropFirst()
guard let port = Int(arguments.first ?? "8081"), (0...65535).contains(port) else {
  fatalError("usage: CovenantHTTPAsyncBaseline [port] [threads]")
}
let threads = arguments.dropFirst().first.flatMap(Int.init) ?? System.coreCount

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let backends = AsyncBackends()
let limiters = AsyncRateLimiters(group: group, tokensPerSecondPerLoop: 200_000, burst: 2_000)

let server = try await ServerBootstrap(group: group)
  .serverChannelOption(.backlog, value: 1024)
  .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
  .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
  .bind(host: "127.0.0.1", port: port) { channel in
    channel.eventLoop.makeCompletedFuture {
      try channel.pipeline.syncOperations.configureHTTPServerPipeline()
      return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
        wrappingChannelSynchronously: channel)
    }
  }

print(
  "CovenantHTTPAsyncBaseline listening on \(server.channel.localAddress!) with \(threads) event loop threads"
)
fflush(nil)  // the load script waits for this line

try await withThrowingDiscardingTaskGroup { connections in
  try await server.executeThenClose { inbound in
    for try await connection in inbound {
      connections.addTask {
        let handler = AsyncHandler(
          limiter: limiters.limiter(for: connection.channel.eventLoop), backends: backends)
        try? await serve(connection, with: handler)
      }
    }
  }
}
