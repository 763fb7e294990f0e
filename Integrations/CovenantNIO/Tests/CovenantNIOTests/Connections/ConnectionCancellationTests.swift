import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// Cancelling a coroutine in the middle of a read or a write on a real connection: the wait
/// throws `CoroutineError.canceled`, no byte that arrived is lost, and the channel goes on.
final class ConnectionCancellationTests: ConnectionTestCase {
  /// A reader waiting for the rest of a line is cancelled after part of it arrived; the next
  /// reader gets the whole line.
  func testCancelledReadKeepsTheBytesThatArrived() throws {
    let partArrived = CoPromise<Void>()
    let outcome = CoPromise<String>()
    let server = try serve { connection in
      let loop = connection.channel.eventLoop
      let scope = CoScope()
      let reader = CoPromise<Error>()
      loop.startCoroutine(in: scope) {
        do {
          _ = try connection.readLine(maxLength: 100)
          reader.success(TestError())
        } catch {
          reader.success(error)
        }
      }
      // Wait until "hel" is buffered under the waiting reader, then cancel it.
      while try connection.bufferedInboundCount() < 3 { try Coroutine.delay(.milliseconds(1)) }
      partArrived.success(())
      scope.cancel()
      XCTAssertEqual(try reader.await() as? CoroutineError, .canceled)
      outcome.success(try connection.readLine(maxLength: 100) ?? "end of input")
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    client.send("hel")
    _ = value(of: partArrived)
    client.send("lo\n")
    XCTAssertEqual(value(of: outcome), "hello")
  }

  /// Cancelled while waiting with nothing buffered: the next read gets what arrives later.
  func testCancelledEmptyReadLeavesTheChannelReadable() throws {
    let cancelled = CoPromise<Void>()
    let outcome = CoPromise<String>()
    let server = try serve { connection in
      let scope = CoScope()
      let reader = connection.channel.eventLoop.coroutineFuture { try connection.read() }
      scope.add(reader)
      try Coroutine.delay(.milliseconds(5))  // the reader is waiting
      scope.cancel()
      XCTAssertThrowsError(try reader.await())
      cancelled.success(())
      outcome.success(try connection.read().map { String(buffer: $0) } ?? "end of input")
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    _ = value(of: cancelled)
    client.send("later")
    XCTAssertEqual(value(of: outcome), "later")
  }

  /// A writer suspended by a peer that does not read is cancelled: its write throws
  /// `CoroutineError.canceled`; the connection's other coroutine can still close it.
  func testCancelledWriteThrowsCanceled() throws {
    let failure = CoPromise<Error>()
    var configuration = NIOCoroutineChannel<ByteBuffer, ByteBuffer>.Configuration()
    configuration.outboundWatermarks = .init(low: 1024, high: 4096)
    let server = try serve(configuration: configuration) { connection in
      let scope = CoScope()
      let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)
      connection.channel.eventLoop.startCoroutine(in: scope) {
        do {
          while true { try connection.write(chunk) }
        } catch {
          failure.success(error)
        }
      }
      while connection.channel.isWritable { try Coroutine.delay(.milliseconds(1)) }
      try Coroutine.delay(.milliseconds(5))  // the writer is suspended
      scope.cancel()
      _ = try failure.await()
      try connection.close()
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port, receiveBuffer: 4096)
    XCTAssertEqual(value(of: failure) as? CoroutineError, .canceled)
    withExtendedLifetime(client) {}
  }
}
