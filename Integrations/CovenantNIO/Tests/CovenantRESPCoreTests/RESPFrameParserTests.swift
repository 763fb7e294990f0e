import CovenantRESPCore
import NIOCore
import XCTest

final class RESPFrameParserTests: XCTestCase {
  private func parse(_ text: String) throws -> (commands: [[String]], rest: Int) {
    var buffer = ByteBuffer(string: text)
    var arguments: [ByteBuffer] = []
    var commands: [[String]] = []
    while try RESPFrameParser.parseCommand(from: &buffer, into: &arguments) {
      commands.append(arguments.map { String(buffer: $0) })
    }
    return (commands, buffer.readableBytes)
  }

  func testArraysInlineAndPipelined() throws {
    let parsed = try parse("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\nECHO  hi\n*0\r\n")
    XCTAssertEqual(parsed.commands, [["GET", "k"], ["PING"], ["ECHO", "hi"], []])
    XCTAssertEqual(parsed.rest, 0)
  }

  func testAFrameCutAnywhereWaitsAndLeavesTheBufferAsItWas() throws {
    let frame = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n"
    for cut in 1..<frame.utf8.count {
      let parsed = try parse(String(frame.utf8.prefix(cut))!)
      XCTAssertEqual(parsed.commands, [], "cut at \(cut)")
      XCTAssertEqual(parsed.rest, cut, "cut at \(cut)")
    }
    XCTAssertEqual(try parse(frame).commands, [["SET", "key", "va\r\nl"]])  // binary-safe bulk
  }

  func testProtocolErrorsNameWhatWasWrong() {
    let cases = [
      ("*x\r\n", "invalid multibulk length"),
      ("*1\r\n$-2\r\n", "invalid bulk length"),
      ("*1\r\n+OK\r\n", "expected '$', got '+'"),
      ("*1\r\n$1\r\nab\r\n", "bulk string not followed by CRLF"),
      ("*1\r\n$\(RESPLimits.maximumBulkLength + 1)\r\n", "invalid bulk length"),
      (String(repeating: "a", count: RESPLimits.maximumLineLength + 3), "too big inline request"),
    ]
    for (input, reason) in cases {
      XCTAssertThrowsError(try parse(input), input.prefix(20).debugDescription) { error in
        XCTAssertEqual((error as? RESPProtocolError)?.reason, reason)
      }
    }
  }

  func testDecimalIntegersAreReadAsRedisReadsThem() {
    XCTAssertEqual(ByteBuffer(string: "0").decimalInteger, 0)
    XCTAssertEqual(ByteBuffer(string: "-42").decimalInteger, -42)
    XCTAssertEqual(ByteBuffer(string: "9223372036854775807").decimalInteger, Int.max)
    XCTAssertEqual(ByteBuffer(string: "-9223372036854775808").decimalInteger, Int.min)
    for bad in ["", "-", "01", "-0", "+1", " 1", "1a", "9223372036854775808"] {
      XCTAssertNil(ByteBuffer(string: bad).decimalInteger, bad)
    }
  }
}
