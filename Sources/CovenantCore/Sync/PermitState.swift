/// What `CoMutex` and `CoSemaphore` keep under their lock: the free permits, the coroutines
/// waiting for one (first come, first served), and who holds the mutex.
///
/// Permits are handed over, never left to be grabbed: a released permit goes straight to the
/// first waiter whose await the releaser can claim (under this lock), so a newcomer cannot
/// barge in ahead of the queue, and the permit is never given to a waiter that a cancel or a
/// timeout has already claimed (that waiter is skipped; it takes itself out of the queue when it
/// wakes). Hence `available > 0` only while no live waiter is queued.
///
/// `@unchecked Sendable`: only ever touched inside its mutex.
struct PermitState: @unchecked Sendable {
  /// Free permits.
  var available: Int
  /// Waiting coroutines, FIFO. Each entry keeps its coroutine alive only while it waits: a
  /// waiter that gives up (cancelled, timed out) removes its entry before it goes on.
  var waiters = RingBuffer<CoroutineWaker>()
  /// `CoMutex` only: who holds the permit (`PermitHolder`), 0 when it is free.
  var holder: UInt = 0

  init(available: Int) { self.available = available }

  /// Takes a permit for `holder` if one is free.
  mutating func take(for holder: UInt) -> Bool {
    guard available > 0 else { return false }
    available -= 1
    self.holder = holder
    return true
  }

  /// Gives a permit back: to the first waiter whose await this claims (returned, to be woken
  /// once the lock is released), or to the pool.
  mutating func give() -> CoroutineWaker? {
    while let waiter = waiters.popFirst() {
      guard waiter.claim() else { continue }  // cancelled or timed out: skipped
      holder = PermitHolder.coroutine(waiter.coroutine)
      return waiter
    }
    available += 1
    holder = 0
    return nil
  }

  /// Takes `waiter`'s entry out of the queue, if still there.
  mutating func remove(_ waiter: CoroutineWaker) {
    waiters.removeFirst { $0.coroutine === waiter.coroutine && $0.generation == waiter.generation }
  }
}
