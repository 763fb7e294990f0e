import NIOCore

// RESP2 replies, written straight into a connection's output buffer: no intermediate String or
// array, so a reply costs no allocation once the buffer has grown to its working size.
extension ByteBuffer {
  /// `+OK\r\n`
  @inlinable
  public mutating func writeRESPSimpleString(_ text: StaticString) {
    writeInteger(UInt8(ascii: "+"))
    writeStaticString(text)
    writeRESPLineEnd()
  }

  /// `-ERR message\r\n`. The message must not contain CR or LF.
  public mutating func writeRESPError(_ message: String) {
    writeInteger(UInt8(ascii: "-"))
    writeString(message)
    writeRESPLineEnd()
  }

  /// `:123\r\n`
  @inlinable
  public mutating func writeRESPInteger(_ value: Int) {
    writeInteger(UInt8(ascii: ":"))
    writeDecimal(value)
    writeRESPLineEnd()
  }

  /// `$3\r\nfoo\r\n`: the readable bytes of `value`.
  @inlinable
  public mutating func writeRESPBulk(_ value: ByteBuffer) {
    writeInteger(UInt8(ascii: "$"))
    writeDecimal(value.readableBytes)
    writeRESPLineEnd()
    writeImmutableBuffer(value)
    writeRESPLineEnd()
  }

  /// `$3\r\nfoo\r\n` from a literal (`message`, `subscribe`, …).
  @inlinable
  public mutating func writeRESPBulk(_ value: StaticString) {
    writeInteger(UInt8(ascii: "$"))
    writeDecimal(value.utf8CodeUnitCount)
    writeRESPLineEnd()
    writeStaticString(value)
    writeRESPLineEnd()
  }

  /// `$-1\r\n`, RESP2's nil.
  @inlinable
  public mutating func writeRESPNull() {
    writeStaticString("$-1\r\n")
  }

  /// `*count\r\n`, followed by `count` replies.
  @inlinable
  public mutating func writeRESPArrayHeader(_ count: Int) {
    writeInteger(UInt8(ascii: "*"))
    writeDecimal(count)
    writeRESPLineEnd()
  }

  @inlinable
  mutating func writeRESPLineEnd() {
    writeInteger(UInt16(0x0D0A))  // "\r\n", big-endian
  }

  /// The decimal digits of `value` (with a leading `-` when negative), without a String.
  @inlinable
  public mutating func writeDecimal(_ value: Int) {
    if value >= 0 && value < 10 {
      writeInteger(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
      return
    }
    var magnitude = value.magnitude
    // 20 digits hold UInt64.max; one more for the sign.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { digits in
      var start = 21
      repeat {
        start -= 1
        digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
        magnitude /= 10
      } while magnitude > 0
      if value < 0 {
        start -= 1
        digits[start] = UInt8(ascii: "-")
      }
      writeBytes(UnsafeBufferPointer(rebasing: digits[start..<21]))
    }
  }
}
