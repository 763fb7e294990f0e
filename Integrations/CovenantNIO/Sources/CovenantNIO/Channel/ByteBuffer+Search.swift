import NIOCore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension ByteBuffer {
  /// The position of the first `byte` among the readable bytes `start..<end` (positions count
  /// from the reader index), with `memchr`.
  func firstIndex(of byte: UInt8, from start: Int, to end: Int) -> Int? {
    guard start < end else { return nil }
    precondition(start >= 0 && end <= readableBytes, "search outside the readable bytes")
    return withUnsafeReadableBytes { bytes -> Int? in
      guard let base = bytes.baseAddress,
        let found = memchr(base + start, Int32(byte), end - start)
      else { return nil }
      return UnsafeRawPointer(found) - base
    }
  }
}
