import CovenantNIO
import NIOCore
import NIOEmbedded
import XCTest

/// Lines split across buffers that are all buffered before the reader runs (deterministic, on
/// an `EmbeddedChannel`): a line ending early in the next buffer takes only its part of it, the
/// rest of that buffer still reads in order, and the length limit still holds.
final class LinesAcrossBuffersTests: XCTestCase {
  /// Feeds `pieces` as separate buffers, then reads lines of at most `maxLength` bytes until
  /// the end of input, recording each line or "too long".
  private func lines(of pieces: [String], maxLength: Int) throws -> [String] {
    let loop = EmbeddedEventLoop()
    let channel = EmbeddedChannel(loop: loop)
    let connection = try NIOCoroutineChannel<ByteBuffer, ByteBuffer>(
      wrappingChannelSynchronously: channel)
    for piece in pieces { try channel.writeInbound(ByteBuffer(string: piece)) }
    let seen = Shared<[String]>([])
    loop.startCoroutine {
      var lines: [String] = []
      defer { seen.value = lines }
      while true {
        do {
          guard let line = try connection.readLine(maxLength: maxLength) else { return }
          lines.append(line)
        } catch NIOCoroutineChannelError.lineTooLong {
          lines.append("too long")
        }
      }
    }
    loop.run()  // reads what is buffered, then waits
    _ = try channel.finish()  // the end of input: the last line, then nil
    loop.run()
    return seen.value
  }

  func testLinesEndingEarlyInTheNextBuffer() throws {
    XCTAssertEqual(
      try lines(of: ["ab", "c\nde", "f\r\ng\n", "h"], maxLength: 100), ["abc", "def", "g", "h"])
  }

  func testLineAcrossThreeBuffers() throws {
    XCTAssertEqual(try lines(of: ["a", "b", "c\nd\n"], maxLength: 100), ["abc", "d"])
  }

  func testLimitHoldsForALineJoinedFromTwoBuffers() throws {
    // "abcd" is one byte over; the limit's reach stops the search before a later LF.
    XCTAssertEqual(try lines(of: ["ab", "cd\nx\n"], maxLength: 3), ["too long", "x"])
    XCTAssertEqual(try lines(of: ["ab", "c\r\nx\n"], maxLength: 3), ["abc", "x"])
    XCTAssertEqual(try lines(of: ["ab", "cdef\nx\n"], maxLength: 3), ["too long", "x"])
  }
}
