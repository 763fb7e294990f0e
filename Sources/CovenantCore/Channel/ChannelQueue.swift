/// The waiting queues of a channel (`ChannelState.receivers` / `.senders`): what they do with
/// waiters whose wait is over.
///
/// Tombstones (`RingBuffer+Tombstones.swift`). A waiter withdrawn from the middle of a queue
/// stays there with its waker cleared (`ChannelQueueEntry.isTombstone`), counted in
/// `tombstones`, so that withdrawing costs O(1) however long the queue is (many coroutines each
/// selecting on one shared channel and on one of their own leave it one by one). A tombstone
/// is dropped when the queue meets it at the front, and all of them at once when they are more
/// than half of the queue. Entries of other kinds (callbacks, futures, a `sendFuture`'s
/// element) are never tombstones. The last entry is never a tombstone.
extension RingBuffer where Element: ChannelQueueEntry {
  /// Takes `waiter` — queued here, its wait over and completed by nobody — out of the queue:
  /// at once when it is at either end, else by leaving a tombstone. Returns `false` if it left
  /// a tombstone (the queue still holds the waiter, which must then not be reused), `true`
  /// otherwise. Under the channel lock.
  @inlinable
  mutating func withdraw(_ waiter: ChannelWaiter<Element.Element>, tombstones: inout Int) -> Bool {
    // A peer met it already claimed, and dropped it.
    if waiter.isDropped { return true }
    if last?.waiter === waiter {
      popLast()
      dropTrailingTombstones(&tombstones)
      assert(last.map { !$0.isTombstone } ?? true, "the last entry of a queue is never a tombstone")
      return true
    }
    if first?.waiter === waiter {
      _ = popFirst()
      return true
    }
    assert(waiter.currentWaker != nil, "a waiter leaves its queue once")
    waiter.currentWaker = nil
    tombstones += 1
    if compact(ifMoreThanHalfGone: tombstones, \.isTombstone) { tombstones = 0 }
    return false
  }

  /// Drops the tombstones at the back: the last entry is never a tombstone, so that
  /// `hasPartner` finds the newest live entries at once.
  @inlinable
  mutating func dropTrailingTombstones(_ tombstones: inout Int) {
    dropTrailingTombstones(&tombstones, \.isTombstone)
  }

  /// Whether the queue holds a live entry that is not a waiter of `waker`'s own wait: a
  /// `select` may have queued another of its cases here, which is no partner for this one
  /// (pairing with it would claim the select's own wait and find nobody, again and again).
  /// Looks from the back, where the select's own waiters are (it just queued them), so it
  /// stops after a few entries.
  @inlinable
  func hasPartner(for waker: CoroutineWaker, tombstones: Int) -> Bool {
    guard count > tombstones else { return false }
    var offset = count
    while offset > 0 {
      offset -= 1
      // A callback, a future, a future's element: a partner.
      guard let waiter = element(at: offset).waiter else { return true }
      // A tombstone is nobody; another coroutine's waiter (even a stale one) is a partner.
      if let other = waiter.currentWaker, !other.isSameWait(as: waker) { return true }
    }
    return false
  }
}
