/// Waiting queues whose entries may leave from the middle (a waiter that gave up) leave a
/// *tombstone* in their place instead of shifting every later entry: leaving costs O(1)
/// however long the queue is. Tombstones go as soon as they reach either end, and all at once
/// when they are more than half of the queue: one O(count) pass, so O(1) amortized for each.
/// The one mechanism of channel waiter queues (`ChannelQueue.swift`) and of `CoMutex` /
/// `CoSemaphore` waiters (`PermitState`); each says what its tombstones look like.
extension RingBuffer {
  /// Drops the tombstones at the front, counting each off `tombstones`.
  @inlinable
  mutating func dropLeadingTombstones(_ tombstones: inout Int, _ isTombstone: (Element) -> Bool) {
    while let first, isTombstone(first) {
      _ = popFirst()
      tombstones -= 1
    }
  }

  /// Drops the tombstones at the back, counting each off `tombstones`.
  @inlinable
  mutating func dropTrailingTombstones(_ tombstones: inout Int, _ isTombstone: (Element) -> Bool) {
    while let last, isTombstone(last) {
      popLast()
      tombstones -= 1
    }
  }

  /// Once `gone` entries (tombstones and whatever else has gone stale) are more than half of
  /// the queue, removes every entry `isGone` says has gone, in one pass that keeps the others
  /// in order, and returns true: the caller's counts of gone entries start again from 0.
  @inlinable
  mutating func compact(ifMoreThanHalfGone gone: Int, _ isGone: (Element) -> Bool) -> Bool {
    guard gone * 2 > count else { return false }
    removeAll(where: isGone)
    return true
  }
}
