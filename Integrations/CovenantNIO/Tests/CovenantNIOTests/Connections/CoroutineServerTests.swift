import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// `bindCoroutines`, `CoroutineServer` and `connectCoroutine` on real loopback sockets.
final class CoroutineServerTests: ConnectionTestCase {
  /// A client coroutine connects with `connectCoroutine` and talks to a coroutine server.
  func testClientCoroutineTalksToServerCoroutine() throws {
    let server = try serve { connection in
      while let line = try connection.readLine() { try connection.write("+\(line)\r\n") }
    }
    defer { try? server.close() }
    let loop = group.next()
    let reply = loop.coroutineFuture { () -> [String] in
      let connection = try ClientBootstrap(group: loop).connectCoroutine(
        host: "127.0.0.1", port: server.port)
      try connection.write("PING\r\n")
      try connection.write(contentsOf: [ByteBuffer(string: "A\r\n"), ByteBuffer(string: "B\r\n")])
      var replies: [String] = []
      for _ in 0..<3 { replies.append(try connection.readLine() ?? "nil") }
      try connection.close()
      return replies
    }
    XCTAssertEqual(value(of: reply), ["+PING", "+A", "+B"])
  }

  func testRefusedConnectionThrows() throws {
    // A port that was just free: bind a server, close it, connect to its port.
    let closed = try serve { _ in }
    let port = closed.port
    try closed.close()
    let loop = group.next()
    let attempt = loop.coroutineFuture { () -> Bool in
      _ = try ClientBootstrap(group: loop).connectCoroutine(host: "127.0.0.1", port: port)
      return true
    }
    guard case .failure(let error) = outcome(of: attempt) else {
      return XCTFail("connecting to a closed port succeeded")
    }
    XCTAssertFalse(error is CoroutineError, "\(error)")
  }

  /// The trap of the issue: a coroutine started in the channel initializer, before the channel
  /// is registered, still gets its first read answered.
  func testCoroutineStartedBeforeRegistrationReads() throws {
    let received = CoPromise<String>()
    let channel = try ServerBootstrap(group: group)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          let connection = try NIOCoroutineChannel<ByteBuffer, ByteBuffer>(
            wrappingChannelSynchronously: channel)
          XCTAssertFalse(channel.isActive)
          channel.eventLoop.startCoroutine {
            received.success(try connection.readLine() ?? "end of input")
            try connection.close()
          }
        }
      }
      .bind(host: "127.0.0.1", port: 0).wait()
    defer { try? channel.close().wait() }
    let client = try LoopbackClient(port: channel.localAddress!.port!)
    client.send("first line\n")
    XCTAssertEqual(value(of: received), "first line")
  }

  /// Closing stops accepting; the open connection goes on.
  func testCloseStopsAcceptingButKeepsConnections() throws {
    let server = try serve { connection in
      while let line = try connection.readLine() { try connection.write("\(line)!\n") }
    }
    let client = try LoopbackClient(port: server.port)
    client.send("a\n")
    XCTAssertEqual(client.receive(until: "\n"), "a!\n")
    try server.close()
    try server.close()  // again: nothing
    XCTAssertThrowsError(try LoopbackClient(port: server.port))
    client.send("b\n")
    XCTAssertEqual(client.receive(until: "\n"), "b!\n")
    try server.shutdown(gracePeriod: .zero)
  }

  /// `shutdown(gracePeriod:)` lets quick handlers finish, cancels the ones still waiting after
  /// the grace period, and returns only once every handler has ended.
  func testGracefulShutdownJoinsEveryHandler() throws {
    let started = Shared(0)
    let ended = Shared(0)
    let canceled = Shared(0)
    let server = try serve { connection in
      started.modify { $0 += 1 }
      defer { ended.modify { $0 += 1 } }
      do {
        let line = try connection.readLine()
        try connection.write("done \(line ?? "")\n")  // the quick ones answer and return
      } catch CoroutineError.canceled {
        canceled.modify { $0 += 1 }
        throw CoroutineError.canceled
      }
    }
    let idle = try (0..<20).map { _ in try LoopbackClient(port: server.port) }
    let quick = try LoopbackClient(port: server.port)
    waitUntil("21 handlers run") { started.value == 21 }
    let shutdown = DispatchQueue.global().coroutineFuture {
      try server.shutdown(gracePeriod: .milliseconds(200))
    }
    quick.send("now\n")
    XCTAssertEqual(quick.receive(until: "\n"), "done now\n")
    _ = value(of: shutdown)
    XCTAssertEqual(ended.value, 21, "shutdown returned before every handler had ended")
    XCTAssertEqual(canceled.value, 20)
    for client in idle { XCTAssertEqual(client.receiveToEnd(), "", "closed without a byte") }
  }

  /// Blocking use from a plain thread: `shutdown` returns after the handlers ended.
  func testShutdownFromAThreadBlocksUntilHandlersEnd() throws {
    let started = Shared(0)
    let ended = Shared(0)
    let server = try serve { connection in
      started.modify { $0 += 1 }
      defer { ended.modify { $0 += 1 } }
      _ = try connection.read()
    }
    let clients = try (0..<5).map { _ in try LoopbackClient(port: server.port) }
    waitUntil("handlers started") { started.value == clients.count }
    try server.shutdown(gracePeriod: TimeAmount.zero)
    XCTAssertEqual(ended.value, clients.count)
  }

  /// Connections arriving while the server shuts down (accepted, not yet active, active): no
  /// crash, `shutdown` returns, and every accepted connection ends up closed with its
  /// coroutine, if it got one, ended.
  func testShutdownWhileConnectionsArrive() throws {
    let running = Shared(0)
    let server = try serve { connection in
      running.modify { $0 += 1 }
      defer { running.modify { $0 -= 1 } }
      while try connection.read() != nil {}
    }
    let port = server.port
    let clients = Shared<[LoopbackClient]>([])
    let connecting = DispatchGroup()
    for _ in 0..<4 {
      DispatchQueue.global().async(group: connecting) {
        for _ in 0..<50 {
          guard let client = try? LoopbackClient(port: port) else { return }
          clients.modify { $0.append(client) }
        }
      }
    }
    waitUntil("some connections run") { running.value > 10 }
    try server.shutdown(gracePeriod: .milliseconds(10))
    XCTAssertEqual(running.value, 0, "shutdown returned while a connection coroutine ran")
    connecting.wait()
    // Every accepted connection is closed by the server: its client reads the end.
    for client in clients.value { XCTAssertEqual(client.receiveToEnd(), "") }
  }
}
