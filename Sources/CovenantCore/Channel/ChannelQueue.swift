/// The waiting queues of a channel (`ChannelState.receivers` / `.senders`).
extension RingBuffer where Element: ChannelQueueEntry {
  /// Whether the queue holds an entry that is not a waiter of `waker`'s own wait: a `select`
  /// may have queued another of its cases here, which is no partner for this one (pairing
  /// with it would claim the select's own wait and find nobody, again and again). Looks from
  /// the back, where the select's own waiters are (it just queued them), so it stops after a
  /// few entries.
  @inlinable
  func hasPartner(for waker: CoroutineWaker) -> Bool {
    var offset = count
    while offset > 0 {
      offset -= 1
      // A callback, a future, a future's element: a partner.
      guard let waiter = element(at: offset).waiter else { return true }
      // Another coroutine's waiter (even a stale one) is a partner.
      if !waiter.waker.isSameWait(as: waker) { return true }
    }
    return false
  }
}
