import NIOCore
import NIOHTTP1
import NIOPosix

// CovenantHTTPExample: an HTTP/1.1 server on SwiftNIO where every request is handled by a
// Covenant coroutine on its channel's event loop, in plain sequential style.
//
//   swift run -c release --package-path Integrations/CovenantNIO CovenantHTTPExample 8080
//   curl http://127.0.0.1:8080/hello
//
// Arguments: [port (default 8080)] [event loop threads (default: number of cores)]
// Listens on 127.0.0.1 only.
#if canImport(Glibc)
  import Glibc
#else
  import Darwin
#endif

let arguments = CommandLine.arguments.dropFirst()
guard let port = Int(arguments.first ?? "8080"), (0...65535).contains(port) else {
  fatalError("usage: CovenantHTTPExample [port] [threads]")
}
let threads = arguments.dropFirst().first.flatMap(Int.init) ?? System.coreCount

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let backends = Backends()
let loops = Array(group.makeIterator())
let limiters = RateLimiters(group: group, tokensPerSecondPerLoop: 200_000, burst: 2_000)

let server = try ServerBootstrap(group: group)
  .serverChannelOption(.backlog, value: 1024)
  .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
  .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
  .childChannelInitializer { channel in
    channel.eventLoop.makeCompletedFuture {
      try channel.pipeline.syncOperations.configureHTTPServerPipeline()
      try channel.pipeline.syncOperations.addHandler(
        RequestHandler(
          scheduler: channel.eventLoop.coroutineScheduler,
          limiter: limiters.limiter(for: channel.eventLoop), backends: backends, loops: loops))
    }
  }
  .bind(host: "127.0.0.1", port: port)
  .wait()

print("CovenantHTTPExample listening on \(server.localAddress!) with \(threads) event loop threads")
fflush(nil)  // the load script waits for this line
try server.closeFuture.wait()
