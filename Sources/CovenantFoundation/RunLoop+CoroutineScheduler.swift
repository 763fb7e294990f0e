import CovenantCore
import Foundation

extension RunLoop: CoroutineScheduler {
  /// Runs `task` on the run loop's thread, in any of the common modes, waking the run loop if
  /// it is waiting. Tasks run in the order they were scheduled.
  ///
  /// The first task scheduled on a run loop adds one timer to it, which every later task rings
  /// (see `RunLoopDoorbell`): the run loop then has a timer for good, so `run()` keeps running
  /// it rather than returning for lack of sources.
  public func scheduleTask(_ task: @escaping () -> Void) {
    RunLoopDoorbell.of(self).schedule(task)
  }
}
