import NIOCore

/// A stored value and when it expires (monotonic nanoseconds; 0: never).
struct StoreEntry {
  var value: ByteBuffer
  var expiresAt: UInt64
}

/// The keys of one shard, and the counts its lazy expiry needs. Always used under the shard's
/// lock.
struct ShardState {
  private var entries: [StoreKey: StoreEntry] = [:]
  /// How many entries have an expiry: none, and the sweep is skipped.
  private var expiring = 0
  private var writesSinceSweep = 0

  /// The value of `key`, removing it if it has expired.
  mutating func value(for key: StoreKey) -> ByteBuffer? {
    guard let index = entries.index(forKey: key) else { return nil }
    let entry = entries.values[index]
    if entry.expiresAt != 0 && entry.expiresAt <= monotonicNanoseconds() {
      entries.remove(at: index)
      expiring -= 1
      return nil
    }
    return entry.value
  }

  mutating func set(_ key: StoreKey, _ entry: StoreEntry, allocator: ByteBufferAllocator) {
    if let index = entries.index(forKey: key) {
      if entries.values[index].expiresAt != 0 { expiring -= 1 }
      entries.values[index] = entry
    } else {
      entries[key.owned(allocator: allocator)] = entry
    }
    if entry.expiresAt != 0 { expiring += 1 }
    wrote()
  }

  mutating func remove(_ key: StoreKey) -> Bool {
    guard let index = entries.index(forKey: key) else { return false }
    let removed = entries.remove(at: index).value
    wrote()
    if removed.expiresAt != 0 {
      expiring -= 1
      return removed.expiresAt > monotonicNanoseconds()
    }
    return true
  }

  mutating func increment(
    _ key: StoreKey, allocator: ByteBufferAllocator
  ) -> Result<Int, RESPStore.IncrementError> {
    guard value(for: key) != nil, let index = entries.index(forKey: key) else {
      var stored = allocator.buffer(capacity: 1)
      stored.writeInteger(UInt8(ascii: "1"))
      set(key, StoreEntry(value: stored, expiresAt: 0), allocator: allocator)
      return .success(1)
    }
    guard let current = entries.values[index].value.decimalInteger else {
      return .failure(.notAnInteger)
    }
    guard current < Int.max else { return .failure(.overflow) }
    // In place when nobody else holds the stored buffer (the usual case): no allocation.
    entries.values[index].value.clear()
    entries.values[index].value.writeDecimal(current + 1)
    wrote()
    return .success(current + 1)
  }

  /// Counts a write, and sweeps the shard's expired keys once the writes since the last sweep
  /// reach the shard's size: constant cost per write, amortized.
  private mutating func wrote() {
    writesSinceSweep += 1
    guard expiring > 0, writesSinceSweep >= max(1024, entries.count) else { return }
    writesSinceSweep = 0
    let now = monotonicNanoseconds()
    let before = entries.count
    entries = entries.filter { $0.value.expiresAt == 0 || $0.value.expiresAt > now }
    expiring -= before - entries.count
  }
}
