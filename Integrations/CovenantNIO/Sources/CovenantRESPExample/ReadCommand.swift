import CovenantNIO
import CovenantRESPCore
import NIOCore

extension NIOCoroutineChannel where Inbound == ByteBuffer, Outbound == ByteBuffer {
  /// Reads the next RESP2 command into `arguments` (replacing them), as plain sequential reads:
  /// `*N` with `readLine`, then per argument `$len` with `readLine` and its bytes (and CRLF)
  /// with `read(exactly:)`. A line that does not start with `*` is an inline command (words
  /// split on spaces), as redis-cli and telnet users send. Returns false at the end of input
  /// (also when it cuts a command short). The arguments are slices of what was received: no
  /// copy.
  /// - Throws: `RESPProtocolError` for input that is not RESP2 (the connection answers it and
  ///   closes); what the reads throw.
  func readCommand(into arguments: inout [ByteBuffer]) throws -> Bool {
    arguments.removeAll(keepingCapacity: true)
    guard let line = try readRESPLine(tooLong: "too big inline request") else { return false }
    guard line.utf8.first == UInt8(ascii: "*") else {
      for word in line.utf8.split(separator: UInt8(ascii: " ")) {
        arguments.append(channel.allocator.buffer(bytes: word))
      }
      return true
    }
    guard let count = line.decimalAfterFirstByte, count <= RESPLimits.maximumArguments else {
      throw RESPProtocolError("invalid multibulk length")
    }
    for _ in 0..<max(0, count) {
      guard let header = try readRESPLine(tooLong: "too big bulk count") else { return false }
      guard header.utf8.first == UInt8(ascii: "$") else {
        throw RESPProtocolError("expected '$', got '\(header.first ?? " ")'")
      }
      guard let length = header.decimalAfterFirstByte, length >= 0,
        length <= RESPLimits.maximumBulkLength
      else { throw RESPProtocolError("invalid bulk length") }
      guard var argument = try readBytes(length + 2) else { return false }
      guard argument.getInteger(at: argument.readerIndex + length, as: UInt16.self) == 0x0D0A
      else { throw RESPProtocolError("bulk string not followed by CRLF") }
      argument.moveWriterIndex(to: argument.readerIndex + length)  // drops the CRLF, no copy
      arguments.append(argument)
    }
    return true
  }

  /// `readLine`, with its errors in RESP's terms.
  private func readRESPLine(tooLong: String) throws -> String? {
    do {
      return try readLine(maxLength: RESPLimits.maximumLineLength)
    } catch NIOCoroutineChannelError.lineTooLong {
      throw RESPProtocolError(tooLong)
    }
  }

  /// `read(exactly:)`, with input that ends in the middle as the end of input.
  private func readBytes(_ count: Int) throws -> ByteBuffer? {
    do {
      return try read(exactly: count)
    } catch NIOCoroutineChannelError.unexpectedEndOfInput {
      return nil
    }
  }
}

extension String {
  /// The decimal integer after the first byte (`*3` → 3, `$-1` → -1), or nil: a header's
  /// number, read from the UTF-8 bytes without a Substring (`Int(line.dropFirst())` costs
  /// several times more per header).
  fileprivate var decimalAfterFirstByte: Int? {
    utf8.withContiguousStorageIfAvailable { bytes -> Int? in
      guard bytes.count >= 2, bytes.count <= 19 else { return nil }
      var index = 1
      let negative = bytes[1] == UInt8(ascii: "-")
      if negative { index = 2 }
      guard index < bytes.count else { return nil }
      var value = 0
      while index < bytes.count {
        let digit = Int(bytes[index]) &- Int(UInt8(ascii: "0"))
        guard digit >= 0 && digit <= 9 else { return nil }
        value = value &* 10 &+ digit  // at most 18 digits: no overflow
        index += 1
      }
      return negative ? -value : value
    } ?? Int(dropFirst())  // not contiguous (not the case of readLine's strings): the slow way
  }
}
