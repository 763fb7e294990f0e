import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// `write(_:)` of byte buffers: the small writes of a turn after its first are copied into one
/// buffer of the channel's (at most 16 KiB, then another), a larger write sends what was
/// gathered first; the bytes arrive complete and in order, over a real loopback connection.
final class WriteGatheringTests: ConnectionTestCase {
  /// 600-byte writes from one reused buffer (as a server reuses its reply buffer), a 2,000-byte
  /// write, then two small ones, all in one turn: the pipeline sees the first write, the first
  /// 16 KiB gathered, the rest gathered before the large write, the large write, and the last
  /// two gathered at the turn's end.
  func testSmallWritesOfATurnAreGatheredInOrder() throws {
    let writes = WriteCounter()
    let counted = CoPromise<[Int]>()
    var expected: [UInt8] = []
    func piece(_ index: Int, size: Int) -> String {
      let head = "\(index):"
      return head + String(repeating: "x", count: size - head.utf8.count - 1) + "\n"
    }
    let small = (0..<33).map { piece($0, size: 600) }
    let large = piece(33, size: 2_000)
    let last = (34..<36).map { piece($0, size: 100) }
    for text in small + [large] + last { expected += Array(text.utf8) }

    let server = try serve(
      channelInitializer: { try $0.pipeline.syncOperations.addHandler(writes) }
    ) { connection in
      var buffer = connection.channel.allocator.buffer(capacity: 600)
      for text in small {
        buffer.clear()
        buffer.writeString(text)
        try connection.write(buffer)
      }
      try connection.write(connection.channel.allocator.buffer(string: large))
      for text in last { try connection.write(text) }
      _ = try connection.readLine()  // suspends: the turn ends, the writes are flushed
      counted.success(writes.sizes)
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    XCTAssertEqual(client.receive(count: expected.count), expected)
    client.send("go\n")
    // 1 as written; 28 × 600 = 16,800 ≥ 16 KiB gathered; 4 × 600 gathered before the large
    // write; the large one; 2 × 100 at the turn's end.
    XCTAssertEqual(value(of: counted), [600, 16_800, 2_400, 2_000, 200])
  }
}

/// Records the size of every write that reaches it (on the channel's loop only).
final class WriteCounter: ChannelOutboundHandler, @unchecked Sendable {
  typealias OutboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer
  private(set) var sizes: [Int] = []

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    sizes.append(unwrapOutboundIn(data).readableBytes)
    context.write(data, promise: promise)
  }
}
