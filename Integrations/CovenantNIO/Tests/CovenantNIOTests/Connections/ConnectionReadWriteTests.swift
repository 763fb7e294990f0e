import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// `NIOCoroutineChannel` reads and writes over real loopback connections, against a plain
/// blocking socket as the peer.
final class ConnectionReadWriteTests: ConnectionTestCase {
  func testEchoesLines() throws {
    let server = try serve { connection in
      while let line = try connection.readLine(maxLength: 1024) {
        try connection.write("echo: \(line)\n")
      }
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    client.send("hello\nworld\r\n")
    XCTAssertEqual(client.receive(until: "world\n"), "echo: hello\necho: world\n")
    client.send("again\n")
    XCTAssertEqual(client.receive(until: "\n"), "echo: again\n")
  }

  func testEndOfInputReadsEverythingThenNil() throws {
    let received = CoPromise<[String]>()
    let server = try serve { connection in
      var chunks: [String] = []
      while let chunk = try connection.read() { chunks.append(String(buffer: chunk)) }
      XCTAssertNil(try connection.read(), "the end of input stays the end")
      received.success(chunks)
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    client.send("abc")
    client.send("def")
    client.shutdownWrite()
    XCTAssertEqual(value(of: received)?.joined(), "abcdef")
  }

  /// The peer half-closes: the server reads the end of input, then still writes, then closes.
  func testHalfClosedPeerStillReceives() throws {
    let server = try serve { connection in
      var total = 0
      while let chunk = try connection.read() { total += chunk.readableBytes }
      try connection.write("read \(total) bytes\n")
      try connection.write("bye\n")
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    client.send(String(repeating: "x", count: 10_000))
    client.shutdownWrite()
    XCTAssertEqual(client.receiveToEnd(), "read 10000 bytes\nbye\n")
  }

  /// `closeOutbound()`: the peer reads the data then the end of input, and can still answer.
  func testCloseOutboundHalfClosesThisSide() throws {
    let answer = CoPromise<String?>()
    let server = try serve { connection in
      try connection.write("question\n")
      try connection.closeOutbound()
      XCTAssertThrowsError(try connection.write("late")) {
        XCTAssertEqual($0 as? NIOCoroutineChannelError, .outputClosed)
      }
      answer.success(try connection.readLine())
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    XCTAssertEqual(client.receiveToEnd(), "question\n", "data, then the end of input")
    client.send("answer\n")
    XCTAssertEqual(value(of: answer) ?? nil, "answer")
  }

  func testReadTimeoutLeavesTheConnectionUsable() throws {
    let timedOut = CoPromise<Void>()
    let received = CoPromise<String>()
    let server = try serve { connection in
      XCTAssertThrowsError(try connection.read(timeout: .milliseconds(20))) {
        XCTAssertEqual($0 as? NIOCoroutineChannelError, .readTimeout)
      }
      XCTAssertThrowsError(try connection.read(timeout: TimeAmount.milliseconds(1))) {
        XCTAssertEqual($0 as? NIOCoroutineChannelError, .readTimeout)
      }
      timedOut.success(())
      let chunk = try connection.read(timeout: .seconds(30))
      received.success(chunk.map { String(buffer: $0) } ?? "end of input")
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    _ = value(of: timedOut)
    client.send("ping")
    XCTAssertEqual(value(of: received), "ping")
  }

  /// The writes of one turn leave in one flush: 100 small writes, then a read that suspends.
  func testWritesOfATurnAreFlushedTogether() throws {
    let flushes = FlushCounter()
    let flushesAtFirstSuspension = CoPromise<Int>()
    let server = try serve(
      channelInitializer: { try $0.pipeline.syncOperations.addHandler(flushes) }
    ) { connection in
      for index in 0..<100 { try connection.write("line \(index)\n") }
      _ = try connection.readLine()  // suspends: the turn ends, the writes are flushed
      flushesAtFirstSuspension.success(flushes.count)
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    XCTAssertTrue(client.receive(until: "line 99\n").hasPrefix("line 0\nline 1\n"))
    client.send("go\n")
    XCTAssertEqual(value(of: flushesAtFirstSuspension), 1)
  }

  func testWriteOnAChannelThePeerClosedThrows() throws {
    let outcome = CoPromise<String>()
    let server = try serve { connection in
      do {
        while try connection.read() != nil {}
      } catch {}  // the reset, as NIO reports it (ECONNRESET)
      do {
        try connection.write("too late")
        try Coroutine.delay(.milliseconds(20))
        try connection.write("too late")
        outcome.success("no error")
      } catch {
        outcome.success("\(error)")
      }
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    client.reset()
    XCTAssertEqual(value(of: outcome), "\(NIOCoroutineChannelError.channelClosed)")
  }

  /// A coroutine on a dispatch queue uses a connection of an event loop (each call hops to the
  /// loop and back).
  func testCoroutineOnAnotherSchedulerReadsAndWrites() throws {
    let server = try serve { connection in
      let future = DispatchQueue.global().coroutineFuture { () -> Int in
        var count = 0
        while let line = try connection.readLine() {
          count += 1
          try connection.write("\(line.uppercased())\n")
        }
        return count
      }
      try connection.write("lines: \(try future.await())\n")
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    client.send("a\nb\n")
    XCTAssertEqual(client.receive(until: "B\n"), "A\nB\n")
    client.shutdownWrite()
    XCTAssertEqual(client.receiveToEnd(), "lines: 2\n")
  }

  func testSecondConcurrentReaderGetsAClearError() throws {
    let outcome = CoPromise<String>()
    let server = try serve { connection in
      let first = connection.channel.eventLoop.coroutineFuture { try connection.read() }
      try Coroutine.delay(.milliseconds(5))  // `first` waits in its read
      do {
        _ = try connection.read()
        outcome.success("no error")
      } catch {
        outcome.success("\(error)")
      }
      _ = try first.await()
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    XCTAssertEqual(value(of: outcome), "\(NIOCoroutineChannelError.concurrentRead)")
    client.send("x")
  }

  func testMethodsOutsideACoroutineThrow() throws {
    let connection = CoPromise<NIOCoroutineChannel<ByteBuffer, ByteBuffer>>()
    let server = try serve {
      connection.success($0)
      _ = try $0.read()
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    let channel = try XCTUnwrap(value(of: connection))
    XCTAssertThrowsError(try channel.write("x")) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertThrowsError(try channel.read()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    withExtendedLifetime(client) {}
  }
}

/// Counts the flushes that reach it (added in front of the coroutine's handler).
final class FlushCounter: ChannelOutboundHandler, @unchecked Sendable {
  typealias OutboundIn = ByteBuffer
  private(set) var count = 0  // on the channel's loop only

  func flush(context: ChannelHandlerContext) {
    count += 1
    context.flush()
  }
}
