/// A scheduler whose timers count time on a clock of its own rather than the system's uptime
/// clock: CovenantTesting's `TestScheduler` (virtual time). A wait that must measure how much
/// of its timeout has passed — a `select` that goes on waiting after a stage dropped what one
/// of its cases received — reads this clock, so that virtual time stays exact.
package protocol SchedulerClock: AnyObject {
  /// Now, in nanoseconds, on the clock the scheduler's timers count on.
  var clockNanoseconds: UInt64 { get }
}
