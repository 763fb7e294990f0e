import NIOCore

/// A key of the store: its bytes and their hash, computed once per command and used both to
/// pick the shard and as the dictionary's hash (so the bytes are hashed once, not twice).
struct StoreKey: Hashable {
  var bytes: ByteBuffer
  let hash: UInt64

  /// A key over `bytes` as they are (a slice of the request: only for looking up).
  init(_ bytes: ByteBuffer) {
    self.bytes = bytes
    // FNV-1a, 64 bits: keys are short, and Dictionary mixes the result with its seed.
    hash = bytes.withUnsafeReadableBytes { raw in
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325
      for byte in raw {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
      }
      return hash
    }
  }

  /// The same key over a copy of its bytes in a buffer of their exact size: what the store
  /// keeps, so that a stored key never holds on to the (larger) buffer a request was read into.
  func owned(allocator: ByteBufferAllocator) -> StoreKey {
    var copy = self
    copy.bytes = allocator.buffer(capacity: bytes.readableBytes)
    copy.bytes.writeImmutableBuffer(bytes)
    return copy
  }

  func hash(into hasher: inout Hasher) { hasher.combine(hash) }

  static func == (left: StoreKey, right: StoreKey) -> Bool {
    left.hash == right.hash && left.bytes == right.bytes
  }
}
