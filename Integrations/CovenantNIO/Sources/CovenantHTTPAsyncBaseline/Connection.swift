import NIOCore
import NIOHTTP1

/// Serves the requests of one connection, one at a time, from a Swift task.
func serve(
  _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
  with handler: AsyncHandler
) async throws {
  let loop = connection.channel.eventLoop
  let allocator = connection.channel.allocator
  try await connection.executeThenClose { inbound, outbound in
    var head: HTTPRequestHead?
    for try await part in inbound {
      switch part {
      case .head(let requestHead): head = requestHead
      case .body: break
      case .end:
        guard let request = head else { continue }
        head = nil
        let status: HTTPResponseStatus
        let body: String
        do {
          (status, body) = (.ok, try await handler.respond(to: request.uri, on: loop))
        } catch {
          (status, body) = (.internalServerError, "error: \(error)\n")
        }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/plain; charset=utf-8")
        headers.add(name: "content-length", value: String(body.utf8.count))
        if !request.isKeepAlive { headers.add(name: "connection", value: "close") }
        try await outbound.write(
          contentsOf: [
            .head(HTTPResponseHead(version: request.version, status: status, headers: headers)),
            .body(.byteBuffer(allocator.buffer(string: body))),
            .end(nil),
          ])
        if !request.isKeepAlive { return }
      }
    }
  }
}
