import NIOCore

extension ByteBuffer {
  /// The readable bytes as a decimal 64-bit integer, as Redis reads one (`string2ll`): an
  /// optional `-`, then digits without a leading zero (but `0` itself), nothing else, in range.
  /// Nil otherwise.
  public var decimalInteger: Int? {
    withUnsafeReadableBytes { bytes -> Int? in
      guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
      var index = 0
      let negative = bytes[0] == UInt8(ascii: "-")
      if negative { index = 1 }
      guard index < bytes.count else { return nil }
      if bytes[index] == UInt8(ascii: "0") {
        return bytes.count == 1 ? 0 : nil  // "0" only: no "-0", no "01"
      }
      // Accumulated as a negative number, whose range includes Int.min.
      var value = 0
      while index < bytes.count {
        let digit = Int(bytes[index]) - Int(UInt8(ascii: "0"))
        guard digit >= 0 && digit <= 9 else { return nil }
        let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = times10.subtractingReportingOverflow(digit)
        guard !overflow1 && !overflow2 else { return nil }
        value = next
        index += 1
      }
      if negative { return value }
      return value == Int.min ? nil : -value
    }
  }
}
