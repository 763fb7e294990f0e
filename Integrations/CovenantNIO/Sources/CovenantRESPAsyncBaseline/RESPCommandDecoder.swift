import CovenantRESPCore
import NIOCore

/// One decoded request: a command's arguments (slices of what was read), or a protocol error
/// that the connection answers before it closes.
enum RESPRequest {
  case command([ByteBuffer])
  case protocolError(RESPProtocolError)
}

/// RESP2 requests out of the byte stream, NIO's way: a `ByteToMessageDecoder` in the pipeline,
/// ahead of the `NIOAsyncChannel` that hands them to the connection's task.
struct RESPCommandDecoder: ByteToMessageDecoder {
  typealias InboundOut = RESPRequest
  private var failed = false

  mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
    guard !failed else {
      buffer.moveReaderIndex(forwardBy: buffer.readableBytes)  // ignored after an error
      return .needMoreData
    }
    var arguments: [ByteBuffer] = []
    do {
      guard try RESPFrameParser.parseCommand(from: &buffer, into: &arguments) else {
        return .needMoreData
      }
    } catch {
      failed = true
      context.fireChannelRead(wrapInboundOut(.protocolError(error)))
      return .needMoreData
    }
    if !arguments.isEmpty { context.fireChannelRead(wrapInboundOut(.command(arguments))) }
    return .continue
  }

  mutating func decodeLast(
    context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
  ) -> DecodingState {
    // A command cut short by the end of input is dropped, as Redis drops it.
    decode(context: context, buffer: &buffer)
  }
}
