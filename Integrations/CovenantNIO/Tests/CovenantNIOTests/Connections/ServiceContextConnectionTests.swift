import CovenantNIO
import CovenantServiceContext
import Dispatch
import InMemoryTracing
import Logging
import NIOCore
import NIOPosix
import Tracing
import XCTest

/// A value of our own in the service context, beside the span: the connection's name.
private enum ConnectionName: ServiceContextKey {
  typealias Value = String
}

extension ServiceContext {
  fileprivate var connectionName: String? {
    get { self[ConnectionName.self] }
    set { self[ConnectionName.self] = newValue }
  }
}

/// One log line as the handler emitted it: message and merged metadata.
private struct LogRecord: Sendable {
  let message: String
  let metadata: [String: String]
}

/// A `LogHandler` that records each line with the metadata its provider gives at that moment.
private struct RecordingLogHandler: LogHandler {
  let records: Shared<[LogRecord]>
  var metadataProvider: Logger.MetadataProvider?
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .info

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    var merged = metadata
    merged.merge(metadataProvider?.get() ?? [:]) { $1 }
    merged.merge(event.metadata ?? [:]) { $1 }
    let record = LogRecord(
      message: "\(event.message)", metadata: merged.mapValues { "\($0)" })
    records.modify { $0.append(record) }
  }
}

/// `ServiceContext.coroutineCurrent` in a coroutine-per-connection server on real loopback
/// sockets: a swift-distributed-tracing span (a real tracer, `InMemoryTracer`) and a swift-log
/// metadata value (a provider reading `ServiceContext.current`) follow each connection's
/// coroutine across awaits, a delay and a hop to another scheduler and back, and never reach
/// another connection's coroutine on the same loop thread.
final class ServiceContextConnectionTests: XCTestCase {
  func testSpanAndLogMetadataFollowEachConnectionsCoroutine() throws {
    // One loop thread: all connections' coroutines share it, so a leak would show.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let elsewhere = DispatchQueue(label: "elsewhere")
    let tracer = InMemoryTracer()
    let records = Shared<[LogRecord]>([])
    let provider = Logger.MetadataProvider {
      guard let context = ServiceContext.current else { return [:] }
      var metadata: Logger.Metadata = [:]
      if let span = context.inMemorySpanContext {
        metadata["trace-id"] = "\(span.traceID)"
        metadata["span-id"] = "\(span.spanID)"
      }
      if let name = context.connectionName { metadata["connection"] = "\(name)" }
      return metadata
    }
    let logger = Logger(label: "server") { _, _ in
      RecordingLogHandler(records: records, metadataProvider: provider)
    }
    let bound = Shared(0)

    /// What the coroutine sees now: its connection name, as read from the context directly.
    @Sendable func seen() -> String { ServiceContext.current?.connectionName ?? "none" }

    let server = try ServerBootstrap(group: group)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .bindCoroutines(host: "127.0.0.1", port: 0) { connection in
        guard let name = try connection.readLine() else { return }
        if name == "plain" {
          // Binds nothing: runs on the same thread between the others' slices.
          bound.modify { $0 += 1 }
          _ = try connection.readLine()
          logger.info("plain")
          try connection.write("\(seen())\n")
          return
        }
        let span = tracer.startSpan(
          "connection \(name)", context: ServiceContext.current ?? .topLevel)
        var context = span.context
        context.connectionName = name
        try ServiceContext.coroutineCurrent.withValue(context) {
          logger.info("accepted")
          bound.modify { $0 += 1 }
          var steps: [String] = []
          _ = try connection.readLine()  // an await on I/O, while the others run
          steps.append(seen())
          logger.info("read")
          try Coroutine.delay(.milliseconds(5))
          steps.append(seen())
          logger.info("delayed")
          try elsewhere.await {
            XCTAssertFalse(connection.channel.eventLoop.inEventLoop, "not hopped")
            steps.append(seen())
            logger.info("elsewhere")
          }
          XCTAssertTrue(connection.channel.eventLoop.inEventLoop, "not back")
          steps.append(seen())
          steps.append(try Coroutine.awaitAsync { seen() })
          // A span started after all that has the connection's span as its parent.
          tracer.startSpan("child \(name)", context: ServiceContext.current ?? .topLevel).end()
          logger.info("replied")
          try connection.write("\(steps.joined(separator: " "))\n")
        }
        span.end()
        logger.info("after")
      }
    defer { try? server.close() }
    let port = server.localAddress.port!

    let clients = try ["A", "B", "plain"].map { name in
      let client = try LoopbackClient(port: port)
      client.send("\(name)\n")
      return client
    }
    waitUntil("every connection bound its context") { bound.value == 3 }
    // Resume them in an order other than their start, so their slices interleave.
    for index in [1, 2, 0] { clients[index].send("go\n") }
    XCTAssertEqual(clients[0].receive(until: "\n"), "A A A A A\n")
    XCTAssertEqual(clients[1].receive(until: "\n"), "B B B B B\n")
    XCTAssertEqual(clients[2].receive(until: "\n"), "none\n")
    waitUntil("both connections ended") {
      records.value.filter { $0.message == "after" }.count == 2
    }

    // Tracing: each child span is in its connection's trace, under its connection's span.
    let finished = tracer.finishedSpans
    for name in ["A", "B"] {
      guard let parent = finished.first(where: { $0.operationName == "connection \(name)" }),
        let child = finished.first(where: { $0.operationName == "child \(name)" })
      else { return XCTFail("spans of \(name) missing: \(finished.map(\.operationName))") }
      XCTAssertEqual(child.traceID, parent.traceID, name)
      XCTAssertEqual(child.parentSpanID, parent.spanID, name)
      XCTAssertNil(parent.parentSpanID, "\(name) began a trace of its own")

      // Logging: every line logged inside the binding carries that connection's span and name.
      let lines = records.value.filter { $0.metadata["connection"] == name }
      XCTAssertEqual(
        lines.map(\.message), ["accepted", "read", "delayed", "elsewhere", "replied"], name)
      for line in lines {
        XCTAssertEqual(line.metadata["trace-id"], parent.traceID, "\(name) \(line.message)")
        XCTAssertEqual(line.metadata["span-id"], parent.spanID, "\(name) \(line.message)")
      }
    }
    XCTAssertNotEqual(
      finished.first { $0.operationName == "connection A" }?.traceID,
      finished.first { $0.operationName == "connection B" }?.traceID)
    // Outside the bindings, and in the connection that bound nothing: no metadata at all.
    for line in records.value where ["after", "plain"].contains(line.message) {
      XCTAssertEqual(line.metadata, [:], line.message)
    }
  }
}
