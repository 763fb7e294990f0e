import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// Flow control both ways over real sockets: a peer that never reads suspends the writer, and a
/// reader that does not read holds a fast peer back through TCP instead of buffering.
final class BackPressureTests: ConnectionTestCase {
  /// The server writes 64 KiB chunks to a peer that never reads: the writer suspends once the
  /// channel is over its high watermark, and what the server holds stays bounded (the channel's
  /// pending bytes at most the high watermark plus one chunk).
  func testPeerThatNeverReadsSuspendsTheWriter() throws {
    let chunkSize = 64 * 1024
    let written = Shared(0)
    let pendingWhenSuspended = CoPromise<Int>()
    let writerEnded = CoPromise<String>()
    var configuration = NIOCoroutineChannel<ByteBuffer, ByteBuffer>.Configuration()
    configuration.outboundWatermarks = .init(low: 32 * 1024, high: 256 * 1024)
    let server = try serve(configuration: configuration) { connection in
      let chunk = ByteBuffer(repeating: 0x61, count: chunkSize)
      let writer = connection.channel.eventLoop.coroutineFuture { () -> Void in
        while true {
          try connection.write(chunk)
          written.modify { $0 += chunkSize }
        }
      }
      // Watch from this coroutine, on the same loop: once the writer has stopped making
      // progress, read what the channel holds.
      var last = -1
      while written.value != last || connection.channel.isWritable {
        last = written.value
        try Coroutine.delay(.milliseconds(20))
      }
      let pending = try connection.channel.syncOptions!.getOption(.bufferedWritableBytes)
      pendingWhenSuspended.success(pending)
      do {
        try writer.await()
      } catch {
        writerEnded.success("\(error)")
      }
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port, receiveBuffer: 16 * 1024)
    let pending = value(of: pendingWhenSuspended) ?? .max
    XCTAssertLessThanOrEqual(pending, 256 * 1024 + chunkSize)
    // What left the server sits in the kernel's socket buffers (a few MB at most on loopback).
    XCTAssertLessThan(written.value, 64 * 1024 * 1024)
    client.reset()  // the peer vanishes: the suspended write fails, nothing hangs
    XCTAssertEqual(value(of: writerEnded), "\(NIOCoroutineChannelError.channelClosed)")
  }

  /// A server that does not read: the client's sends stop once the kernel buffers and one read
  /// of NIO's are full; the server holds at most its read-ahead watermark plus one read.
  func testSlowReaderHoldsTheFastPeerBack() throws {
    let buffered = CoPromise<Int>()
    let release = CoPromise<Void>()
    let total = CoPromise<Int>()
    let server = try serve { connection in
      _ = try connection.read(exactly: 1)  // one read, then none for a while
      try release.await()
      buffered.success(try connection.bufferedInboundCount())
      var count = 1
      while let chunk = try connection.read() { count += chunk.readableBytes }
      total.success(count)
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    // Non-blocking sends until the socket is full.
    let flags = fcntl(client.descriptor, F_GETFL)
    _ = fcntl(client.descriptor, F_SETFL, flags | O_NONBLOCK)
    let block = [UInt8](repeating: 0x62, count: 64 * 1024)
    var sent = 0
    var stalls = 0
    while stalls < 50, sent < 256 * 1024 * 1024 {
      let n = block.withUnsafeBytes { send(client.descriptor, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        sent += n
        stalls = 0
      } else {
        stalls += 1
        usleep(2_000)
      }
    }
    XCTAssertLessThan(sent, 256 * 1024 * 1024, "the peer was never held back")
    release.success(())
    // At most one NIO read (maxMessagesPerRead receive buffers, 64 KiB each at most) beyond
    // the default watermark of 1 byte.
    XCTAssertLessThanOrEqual(value(of: buffered) ?? .max, 4 * 64 * 1024)
    _ = fcntl(client.descriptor, F_SETFL, flags)
    client.shutdownWrite()
    XCTAssertEqual(value(of: total), sent)
  }
}
