/// Bytes read chunk by chunk into one growing allocation (a read goes straight into it), then
/// handed out as one array: the collecting buffer of `CoProcess.run` and of whole-file reads of
/// files whose size is not known. Bytes are moved with `memcpy`, never one by one (generic
/// array code, inlined into a debug build, takes about a microsecond per element).
///
/// Not thread-safe: its owner serialises the calls.
final class ByteAccumulator {
  private var storage: UnsafeMutableRawPointer
  private var capacity: Int
  /// Bytes written so far.
  private(set) var count = 0

  init(capacity: Int = 4096) {
    self.capacity = Swift.max(capacity, 16)
    storage = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
  }

  deinit { storage.deallocate() }

  /// Room for `extra` more bytes after the written ones (growing the allocation if needed),
  /// for a read to fill; then `commit` how many it wrote.
  func reserve(_ extra: Int) -> UnsafeMutableRawPointer {
    if capacity - count < extra {
      capacity = Swift.max(capacity * 2, count + extra)
      storage = reallocate(storage, keeping: count, capacity: capacity)
    }
    return storage + count
  }

  /// Counts `written` bytes, placed by the caller where `reserve` said.
  func commit(_ written: Int) { count += written }

  /// The bytes written so far, as an array; the accumulator is empty afterwards.
  func takeBytes() -> [UInt8] {
    defer { count = 0 }
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      if count > 0 {
        UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: storage, byteCount: count)
      }
      initialized = count
    }
  }
}

/// A new allocation of `capacity` bytes holding the first `count` bytes of `buffer`, which is
/// freed: how the system layer's byte buffers grow.
func reallocate(_ buffer: UnsafeMutableRawPointer, keeping count: Int, capacity: Int)
  -> UnsafeMutableRawPointer
{
  let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
  bigger.copyMemory(from: buffer, byteCount: count)
  buffer.deallocate()
  return bigger
}
