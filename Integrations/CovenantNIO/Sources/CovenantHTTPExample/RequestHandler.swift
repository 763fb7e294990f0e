import CovenantNIO
import NIOCore
import NIOHTTP1
import Synchronization

/// Requests answered so far, for `/stats`.
let requestsServed = Atomic<Int>(0)

/// Collects a request and answers it from a coroutine started on the channel's event loop.
/// (The pipeline's `HTTPServerPipelineHandler` delivers one request at a time per connection,
/// so responses cannot overtake each other.)
final class RequestHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let handler: Handler
  private let scheduler: EventLoopCoroutineScheduler
  private var head: HTTPRequestHead?

  init(
    scheduler: EventLoopCoroutineScheduler, limiter: RateLimiter, backends: Backends,
    loops: [any EventLoop]
  ) {
    self.scheduler = scheduler
    handler = Handler(limiter: limiter, backends: backends, scheduler: scheduler, loops: loops)
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head): self.head = head
    case .body: break
    case .end:
      guard let head = self.head.take() else { return }
      respond(to: head, context: context)
    }
  }

  private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
    let loop = context.eventLoop
    // The coroutine runs on this loop, so the context may be used from it.
    let bound = NIOLoopBound((self, context), eventLoop: loop)
    let handler = self.handler
    // Inside a turn, the coroutine starts right after this read event is handled, in the same
    // loop task, instead of in a new `execute`.
    let scheduler = self.scheduler
    scheduler.withTurn {
      scheduler.startCoroutine {
        let (this, context) = bound.value
        let response: (HTTPResponseStatus, String)
        do {
          response = (.ok, try handler.respond(to: head.uri))
        } catch {
          response = (.internalServerError, "error: \(error)\n")
        }
        requestsServed.add(1, ordering: .relaxed)
        this.write(response, keepAlive: head.isKeepAlive, version: head.version, context: context)
      }
    }
  }

  private func write(
    _ response: (status: HTTPResponseStatus, body: String), keepAlive: Bool,
    version: HTTPVersion, context: ChannelHandlerContext
  ) {
    var headers = HTTPHeaders()
    headers.add(name: "content-type", value: "text/plain; charset=utf-8")
    headers.add(name: "content-length", value: String(response.body.utf8.count))
    if !keepAlive { headers.add(name: "connection", value: "close") }
    let head = HTTPResponseHead(version: version, status: response.status, headers: headers)
    context.write(wrapOutboundOut(.head(head)), promise: nil)
    let buffer = context.channel.allocator.buffer(string: response.body)
    context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
    let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
    if !keepAlive {
      let channel = context.channel
      done.whenComplete { _ in channel.close(promise: nil) }
    }
  }
}

extension Optional {
  /// Returns the value and leaves `nil` behind.
  fileprivate mutating func take() -> Wrapped? {
    defer { self = nil }
    return self
  }
}
