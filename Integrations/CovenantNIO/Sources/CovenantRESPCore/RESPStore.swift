import NIOCore
import Synchronization

/// The data of both RESP servers: string keys to string values with optional expiry, in shards
/// of their own locks so that event-loop threads working on different keys rarely meet.
///
/// Thread-safe: every method may be called from any thread. Values are returned as buffers that
/// share the stored bytes (no copy); a later write of the key replaces the stored buffer and
/// leaves a returned one as it was.
///
/// Expiry is lazy, as Redis's is in part: an expired key is removed when a command touches it,
/// and a shard that holds expiring keys is swept whole once it has had as many writes as it
/// has keys (at least 1,024), which keeps the sweep's cost constant per write.
public final class RESPStore: Sendable {
  private let shards: [Shard]
  private let allocator = ByteBufferAllocator()

  /// A store of `shardCount` shards (rounded up to a power of two).
  public init(shardCount: Int = 64) {
    var count = 1
    while count < shardCount { count <<= 1 }
    shards = (0..<count).map { _ in Shard() }
  }

  private func shard(for key: StoreKey) -> Shard {
    // The top bits: FNV's low bits are its weakest.
    shards[Int(truncatingIfNeeded: key.hash >> 40) & (shards.count - 1)]
  }

  /// The value of `key`, or nil when it has none (or it has expired).
  public func get(_ key: ByteBuffer) -> ByteBuffer? {
    let key = StoreKey(key)
    return shard(for: key).state.withLock { $0.value(for: key) }
  }

  /// Sets `key` to a copy of `value`, expiring at `expiresAt` (monotonic nanoseconds; nil:
  /// never). Like Redis's SET, it removes an earlier expiry.
  public func set(_ key: ByteBuffer, to value: ByteBuffer, expiresAt: UInt64? = nil) {
    let key = StoreKey(key)
    var stored = allocator.buffer(capacity: value.readableBytes)
    stored.writeImmutableBuffer(value)
    let entry = StoreEntry(value: stored, expiresAt: expiresAt ?? 0)
    shard(for: key).state.withLock { state in
      state.set(key, entry, allocator: allocator)
    }
  }

  /// Removes `key`; whether it was there.
  public func delete(_ key: ByteBuffer) -> Bool {
    let key = StoreKey(key)
    return shard(for: key).state.withLock { $0.remove(key) }
  }

  /// Whether `key` has a value.
  public func exists(_ key: ByteBuffer) -> Bool {
    let key = StoreKey(key)
    return shard(for: key).state.withLock { $0.value(for: key) != nil }
  }

  /// Adds one to the decimal integer stored at `key` (0 when it has none) and returns the new
  /// value, keeping the key's expiry, as Redis's INCR.
  public func increment(_ key: ByteBuffer) -> Result<Int, IncrementError> {
    let key = StoreKey(key)
    return shard(for: key).state.withLock { $0.increment(key, allocator: allocator) }
  }

  /// Why an increment failed, with Redis's messages.
  public enum IncrementError: Error, Sendable {
    /// The stored value is not a decimal 64-bit integer.
    case notAnInteger
    /// The value is already `Int.max`.
    case overflow

    /// The message of the error reply, as Redis words it.
    public var message: String {
      switch self {
      case .notAnInteger: "ERR value is not an integer or out of range"
      case .overflow: "ERR increment or decrement would overflow"
      }
    }
  }
}

/// One shard: its own lock over its part of the keys. A class, so that the lock (not copyable)
/// sits at a fixed address the array of shards refers to.
private final class Shard: Sendable {
  let state = Mutex(ShardState())
}
