import CovenantCore
import Foundation

extension RunLoop: CoroutineScheduler {
  /// Runs `task` on the run loop's thread, in any of the common modes, waking the run loop if
  /// it is waiting.
  ///
  /// A zero-interval timer rather than `perform(_:)`: on Linux, `perform` does not wake a run
  /// loop sleeping in `run()`, so the task would wait for some unrelated event.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    let timer = Timer(fire: Date(), interval: 0, repeats: false) { _ in task.value() }
    add(timer, forMode: .common)
  }
}
