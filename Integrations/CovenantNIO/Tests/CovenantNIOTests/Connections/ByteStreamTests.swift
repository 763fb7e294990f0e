import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// `readLine`, `read(exactly:)` and `read(until:maxLength:)` over a real connection, with the
/// peer's bytes split at awkward places.
final class ByteStreamTests: ConnectionTestCase {
  /// Runs `body` on the server side of one connection while `send` feeds it, and returns what
  /// `body` returned.
  private func serverSide<T: Sendable>(
    sending pieces: [String], pause: Bool = true,
    _ body: @escaping @Sendable (NIOCoroutineChannel<ByteBuffer, ByteBuffer>) throws -> T
  ) throws -> Result<T, any Error> {
    let result = CoPromise<T>()
    let server = try serve { connection in
      result.complete(with: Result { try body(connection) })
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    for piece in pieces {
      client.send(piece)
      if pause { usleep(2_000) }  // separate reads on the server, most of the time
    }
    client.shutdownWrite()
    return outcome(of: result)
  }

  func testLinesWithLFAndCRLFAcrossReads() throws {
    let result = try serverSide(sending: ["one\r", "\ntw", "o\n\nthr", "ee\r\nlast"]) {
      connection in
      var lines: [String] = []
      while let line = try connection.readLine(maxLength: 100) { lines.append(line) }
      return lines
    }
    XCTAssertEqual(try result.get(), ["one", "two", "", "three", "last"])
  }

  func testLineOverMaxLengthIsSkippedWhole() throws {
    let long = String(repeating: "x", count: 50)
    let result = try serverSide(sending: ["short\n", long, long, "\r\nnext\n", "0123456789\r\n"]) {
      connection -> [String] in
      var seen = [try connection.readLine(maxLength: 10) ?? "nil"]
      do {
        _ = try connection.readLine(maxLength: 10)
        seen.append("no error")
      } catch let error as NIOCoroutineChannelError {
        seen.append(error == .lineTooLong(maxLength: 10) ? "too long" : "\(error)")
      }
      seen.append(try connection.readLine(maxLength: 10) ?? "nil")
      seen.append(try connection.readLine(maxLength: 10) ?? "nil")  // exactly 10 + CRLF
      seen.append(try connection.readLine(maxLength: 10) ?? "nil")
      return seen
    }
    XCTAssertEqual(try result.get(), ["short", "too long", "next", "0123456789", "nil"])
  }

  /// A line over the limit that is complete in the buffer: skipped through its own LF only.
  func testCompleteLongLineInOneReadIsSkipped() throws {
    let result = try serverSide(sending: ["aaaaaaaaaaaa\nok\n"], pause: false) { connection in
      XCTAssertThrowsError(try connection.readLine(maxLength: 5)) {
        XCTAssertEqual($0 as? NIOCoroutineChannelError, .lineTooLong(maxLength: 5))
      }
      return try connection.readLine(maxLength: 5)
    }
    XCTAssertEqual(try result.get(), "ok")
  }

  func testReadExactlyAcrossReadsAndAtTheEnd() throws {
    let result = try serverSide(sending: ["abc", "defg", "hij"]) { connection -> [String] in
      var parts: [String] = []
      parts.append(String(buffer: try connection.read(exactly: 2)!))
      parts.append(String(buffer: try connection.read(exactly: 5)!))
      parts.append(String(buffer: try connection.read(exactly: 0)!))
      do {
        _ = try connection.read(exactly: 10)
      } catch let error as NIOCoroutineChannelError {
        parts.append("\(error == .unexpectedEndOfInput(expected: 10, received: 3))")
      }
      parts.append(try connection.read(exactly: 1).map { String(buffer: $0) } ?? "nil")
      return parts
    }
    XCTAssertEqual(try result.get(), ["ab", "cdefg", "", "true", "nil"])
  }

  func testReadUntilDelimiter() throws {
    let result = try serverSide(sending: ["a,bb", ",,ccc", "cccccc,d"]) { connection -> [String] in
      var frames: [String] = []
      frames.append(String(buffer: try connection.read(until: UInt8(ascii: ","), maxLength: 4)!))
      frames.append(String(buffer: try connection.read(until: UInt8(ascii: ","), maxLength: 4)!))
      frames.append(String(buffer: try connection.read(until: UInt8(ascii: ","), maxLength: 4)!))
      XCTAssertThrowsError(try connection.read(until: UInt8(ascii: ","), maxLength: 4)) {
        XCTAssertEqual($0 as? NIOCoroutineChannelError, .frameTooLong(maxLength: 4))
      }
      frames.append(String(buffer: try connection.read(until: UInt8(ascii: ","), maxLength: 4)!))
      frames.append(
        try connection.read(until: UInt8(ascii: ","), maxLength: 4).map { String(buffer: $0) }
          ?? "nil")
      return frames
    }
    XCTAssertEqual(try result.get(), ["a", "bb", "", "d", "nil"])
  }

  /// Lines, fixed-size frames and raw reads mixed on one stream keep their order.
  func testMixedReadsKeepTheStreamInOrder() throws {
    let result = try serverSide(sending: ["GET 5\r\nhelloSET", " 3\r\nabc", "rest"]) {
      connection -> [String] in
      var seen: [String] = []
      while let line = try connection.readLine(maxLength: 64) {
        let count = Int(line.split(separator: " ")[1])!
        seen.append(line)
        seen.append(String(buffer: try connection.read(exactly: count)!))
        if seen.count == 4 { break }
      }
      while let chunk = try connection.read() { seen.append(String(buffer: chunk)) }
      return seen
    }
    XCTAssertEqual(try result.get(), ["GET 5", "hello", "SET 3", "abc", "rest"])
  }
}
