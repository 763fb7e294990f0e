import NIOCore

/// Parses RESP2 commands out of a buffer that holds whatever has arrived so far: a command
/// array (`*N\r\n$len\r\nbytes\r\n…`) or an inline command (`PING\r\n`, words split on spaces).
/// The incremental parser of the `NIOAsyncChannel` twin's decoder; the coroutine server reads
/// the same frames with sequential reads instead.
public enum RESPFrameParser {
  /// Takes one command from the front of `buffer` into `arguments` (replacing its contents)
  /// and returns true; or returns false and leaves `buffer` as it was when the command has not
  /// fully arrived. An empty line or `*0` gives an empty `arguments` (no command, no reply).
  /// The arguments are slices of `buffer` (no copy).
  public static func parseCommand(
    from buffer: inout ByteBuffer, into arguments: inout [ByteBuffer]
  ) throws(RESPProtocolError) -> Bool {
    var view = buffer
    arguments.removeAll(keepingCapacity: true)
    guard let first = view.getInteger(at: view.readerIndex, as: UInt8.self) else { return false }
    if first != UInt8(ascii: "*") {
      guard let line = try readLine(from: &view, tooLong: "too big inline request") else {
        return false
      }
      for word in line.readableBytesView.split(separator: UInt8(ascii: " ")) {
        arguments.append(line.getSlice(at: word.startIndex, length: word.count)!)
      }
      buffer = view
      return true
    }
    guard let header = try readLine(from: &view, tooLong: "too big multibulk count") else {
      return false
    }
    guard
      let count = header.getSlice(at: header.readerIndex + 1, length: header.readableBytes - 1)?
        .decimalInteger, count <= RESPLimits.maximumArguments
    else { throw RESPProtocolError("invalid multibulk length") }
    arguments.reserveCapacity(max(0, count))
    for _ in 0..<max(0, count) {
      guard let lengthLine = try readLine(from: &view, tooLong: "too big bulk count") else {
        return false
      }
      guard lengthLine.getInteger(at: lengthLine.readerIndex, as: UInt8.self) == UInt8(ascii: "$")
      else {
        let got = lengthLine.getInteger(at: lengthLine.readerIndex, as: UInt8.self) ?? 0
        throw RESPProtocolError("expected '$', got '\(Character(Unicode.Scalar(got)))'")
      }
      guard
        let length = lengthLine.getSlice(
          at: lengthLine.readerIndex + 1, length: lengthLine.readableBytes - 1)?.decimalInteger,
        length >= 0, length <= RESPLimits.maximumBulkLength
      else { throw RESPProtocolError("invalid bulk length") }
      guard view.readableBytes >= length + 2 else { return false }
      let argument = view.readSlice(length: length)!
      guard view.readInteger(as: UInt16.self) == 0x0D0A else {
        throw RESPProtocolError("bulk string not followed by CRLF")
      }
      arguments.append(argument)
    }
    buffer = view
    return true
  }

  /// One line (LF or CRLF, the end not included), or nil when its end has not arrived; throws
  /// when none ends within `RESPLimits.maximumLineLength`.
  private static func readLine(
    from buffer: inout ByteBuffer, tooLong: String
  ) throws(RESPProtocolError) -> ByteBuffer? {
    let searched = min(buffer.readableBytes, RESPLimits.maximumLineLength + 2)
    let newline = buffer.withUnsafeReadableBytes { bytes in
      bytes[..<searched].firstIndex(of: UInt8(ascii: "\n"))
    }
    guard let newline else {
      if searched > RESPLimits.maximumLineLength { throw RESPProtocolError(tooLong) }
      return nil
    }
    var length = newline
    if length > 0 && buffer.getInteger(at: buffer.readerIndex + length - 1, as: UInt8.self) == 0x0D
    {
      length -= 1
    }
    let line = buffer.getSlice(at: buffer.readerIndex, length: length)!
    buffer.moveReaderIndex(forwardBy: newline + 1)
    return line
  }
}
