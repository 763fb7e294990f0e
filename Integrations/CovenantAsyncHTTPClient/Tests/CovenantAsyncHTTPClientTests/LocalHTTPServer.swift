import Dispatch
import NIOCore
import NIOHTTP1
import NIOPosix

/// A SwiftNIO HTTP/1.1 server on 127.0.0.1 (an ephemeral port), for the client's tests:
/// `/hello` answers `hello`; `/hang` reads the request, answers nothing, and records when the
/// client closes the connection, which is what a cancelled request looks like from the server.
final class LocalHTTPServer: Sendable {
  let port: Int
  private let channel: any Channel
  private let events: ServerEvents

  init() throws {
    let events = ServerEvents()
    self.events = events
    channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.configureHTTPServerPipeline()
          try channel.pipeline.syncOperations.addHandler(RouteHandler(events: events))
        }
      }
      .bind(host: "127.0.0.1", port: 0).wait()
    port = channel.localAddress!.port!
  }

  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  func stop() throws { try channel.close().wait() }

  /// Waits (at most `timeout` seconds) until a `/hang` request has been read.
  func waitForHangingRequest(timeout: Double = 10) -> Bool {
    events.started.wait(timeout: .now() + timeout) == .success
  }

  /// Waits (at most `timeout` seconds) until the client has closed a `/hang` connection.
  func waitForClosedHang(timeout: Double = 10) -> Bool {
    events.closed.wait(timeout: .now() + timeout) == .success
  }
}

private final class ServerEvents: Sendable {
  let started = DispatchSemaphore(value: 0)
  let closed = DispatchSemaphore(value: 0)
}

/// One per connection; runs on the connection's event loop only.
private final class RouteHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let events: ServerEvents
  private var path = ""
  private var hanging = false

  init(events: ServerEvents) { self.events = events }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head):
      path = head.uri
    case .body:
      break
    case .end:
      switch path {
      case "/hang":
        hanging = true
        events.started.signal()
      case "/hello":
        respond(context, status: .ok, body: "hello")
      default:
        respond(context, status: .notFound, body: "no such route")
      }
    }
  }

  func channelInactive(context: ChannelHandlerContext) {
    if hanging { events.closed.signal() }
    context.fireChannelInactive()
  }

  private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, body: String) {
    let buffer = context.channel.allocator.buffer(string: body)
    var headers = HTTPHeaders()
    headers.add(name: "Content-Length", value: "\(buffer.readableBytes)")
    let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
    context.write(wrapOutboundOut(.head(head)), promise: nil)
    context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
  }
}
