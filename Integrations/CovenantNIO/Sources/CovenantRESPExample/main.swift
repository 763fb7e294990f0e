import CovenantNIO
import CovenantRESPCore
import NIOCore
import NIOPosix

// CovenantRESPExample: a RESP2 (Redis protocol) server on SwiftNIO in which every connection is
// one Covenant coroutine of plain sequential reads and writes on a NIOCoroutineChannel
// (Connection.swift, ReadCommand.swift). redis-cli and redis-benchmark are its clients.
//
//   swift run -c release --package-path Integrations/CovenantNIO CovenantRESPExample --port 6380
//   redis-cli -p 6380 set greeting hello && redis-cli -p 6380 get greeting
//
// Commands: PING, ECHO, SET (EX/PX), GET, DEL, EXISTS, INCR, MGET, SUBSCRIBE, UNSUBSCRIBE,
// PUBLISH, QUIT. Flags: --host (default 127.0.0.1), --port (default 6379; 0: any, printed),
// --threads (event loops; default: cores). Its first line of output is `listening on PORT`.
// Its twin on NIOAsyncChannel is CovenantRESPAsyncBaseline; redis.sh compares the two and
// redis-server.

let options = RESPServerOptions(
  CommandLine.arguments, program: "CovenantRESPExample", defaultThreads: System.coreCount)
let group = MultiThreadedEventLoopGroup(numberOfThreads: options.threads)
let store = RESPStore()
let pubsub = RESPPubSub()

let server = try ServerBootstrap(group: group)
  .serverChannelOption(.backlog, value: 1024)
  .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
  .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
  .bindCoroutines(host: options.host, port: options.port) { connection in
    try serve(connection, store: store, pubsub: pubsub)
  }

RESPServerOptions.announce(port: server.localAddress.port ?? options.port)
try server.channel.closeFuture.wait()
