import CovenantCore
import Foundation

extension OperationQueue: CoroutineScheduler {
  /// Runs `task` as a block operation.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    addOperation { task.value() }
  }
}
