/// Something `TimerQueue` runs at a deadline.
///
/// `token` is written when the entry is armed and read when it is taken out to fire, both under
/// the queue's lock; `fire(token:)` gets the value it had when the entry was taken out, so an
/// entry can be armed again (for a later wait) while an earlier firing is still on its way.
class TimerEntry: DeadlineHeapEntry, @unchecked Sendable {
  // Unchecked exclusivity: both are only touched under the queue's lock, which orders them.
  @exclusivity(unchecked) var heapIndex: Int?
  @exclusivity(unchecked) var token: UInt64 = 0

  /// What firing does (each subclass says: hand a task to a queue, wake a coroutine). Runs on
  /// the timer queue's thread, with no lock held, and must be quick: every timer of the
  /// process waits behind it.
  func fire(token: UInt64) {}
}
