/// What `CoMutex` and `CoSemaphore` keep under their lock: the free permits, the coroutines
/// waiting for one (first come, first served), and who holds the mutex.
///
/// Permits are handed over, never left to be grabbed: a released permit goes straight to the
/// first waiter whose await the releaser can claim (under this lock), so a newcomer cannot
/// barge in ahead of the queue, and the permit is never given to a waiter that a cancel or a
/// timeout has already claimed (that waiter is skipped; it takes itself out of the queue when it
/// wakes). Hence `available > 0` only while no live waiter is queued.
///
/// A waiter that gives up finds its entry by its ticket (tickets grow in queue order, so a
/// binary search finds it) and leaves a tombstone in its place, which `give()` skips: no entry
/// moves, so cancelling many waiters at once (a scope's cancel) costs O(log n) each, not a shift
/// of every later entry. Tombstones at either end go at once; when they are more than half of
/// the queue, the queue is compacted (O(n), so O(1) for each tombstone).
///
/// `@unchecked Sendable`: only ever touched inside its mutex.
struct PermitState: @unchecked Sendable {
  /// One place in the queue: a waiting coroutine, or (`waker == nil`) a tombstone.
  struct Waiter {
    let ticket: UInt64
    var waker: CoroutineWaker?
  }

  /// Free permits.
  var available: Int
  /// Waiting coroutines, FIFO, with their tickets in increasing order. Each entry keeps its
  /// coroutine alive only while it waits: a waiter that gives up (cancelled, timed out) leaves
  /// a tombstone before it goes on.
  private(set) var waiters = RingBuffer<Waiter>()
  /// The ticket of the next waiter.
  private var nextTicket: UInt64 = 0
  /// How many entries of `waiters` are tombstones.
  private var tombstones = 0
  /// `CoMutex` only: who holds the permit (`PermitHolder`), 0 when it is free.
  var holder: UInt = 0

  init(available: Int) { self.available = available }

  /// How many coroutines wait (tombstones left out).
  var waiterCount: Int { waiters.count - tombstones }

  /// Takes a permit for `holder` if one is free.
  mutating func take(for holder: UInt) -> Bool {
    guard available > 0 else { return false }
    available -= 1
    self.holder = holder
    return true
  }

  /// Queues `waiter`; returns its ticket, for `remove(_:)`.
  mutating func enqueue(_ waiter: CoroutineWaker) -> UInt64 {
    let ticket = nextTicket
    nextTicket += 1
    waiters.append(Waiter(ticket: ticket, waker: waiter))
    return ticket
  }

  /// Gives a permit back: to the first waiter whose await this claims (returned, to be woken
  /// once the lock is released), or to the pool.
  mutating func give() -> CoroutineWaker? {
    while let entry = waiters.popFirst() {
      guard let waiter = entry.waker else {
        tombstones -= 1
        continue
      }
      guard waiter.claim() else { continue }  // cancelled or timed out: skipped
      holder = PermitHolder.coroutine(waiter.coroutine)
      return waiter
    }
    available += 1
    holder = 0
    return nil
  }

  /// Takes the entry of the waiter with `ticket` out of the queue, if still there (`give()`
  /// may have skipped it already).
  mutating func remove(_ ticket: UInt64) {
    var low = 0
    var high = waiters.count
    while low < high {
      let middle = (low + high) / 2
      if waiters.element(at: middle).ticket < ticket { low = middle + 1 } else { high = middle }
    }
    guard low < waiters.count else { return }
    let entry = waiters.element(at: low)
    guard entry.ticket == ticket, entry.waker != nil else { return }
    waiters.replace(at: low, with: Waiter(ticket: ticket, waker: nil))
    tombstones += 1
    dropTombstones()
  }

  /// Drops the tombstones at both ends, and compacts the queue once tombstones are more than
  /// half of it (`RingBuffer+Tombstones.swift`).
  private mutating func dropTombstones() {
    let isTombstone = { (entry: Waiter) in entry.waker == nil }
    waiters.dropLeadingTombstones(&tombstones, isTombstone)
    waiters.dropTrailingTombstones(&tombstones, isTombstone)
    if waiters.compact(ifMoreThanHalfGone: tombstones, isTombstone) { tombstones = 0 }
  }
}
