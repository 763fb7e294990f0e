import CovenantCore
import Foundation

/// The tasks scheduled on one `RunLoop` (`RunLoop.scheduleTask`), and the one timer that wakes
/// the run loop to run them.
///
/// One repeating timer per run loop, parked in the distant future and rung by moving its fire
/// date to now, rather than a timer per task: swift-corelibs-foundation's block-based `Timer`
/// retains itself for good (its run-loop context has no release callback), so a timer per task
/// would leak with the task, and `RunLoop.perform(_:)` does not wake a run loop sleeping in
/// `run()`. The doorbells are kept for the life of the process in `all`, one per run loop
/// ever scheduled on (its timer is the one object that is never freed), and keep that run loop
/// from finishing for lack of sources.
final class RunLoopDoorbell: @unchecked Sendable {
  private static let lock = NSLock()
  nonisolated(unsafe) private static var all: [ObjectIdentifier: RunLoopDoorbell] = [:]

  /// The run loop, kept so that its identity is never reused while it is a key of `all`.
  private let runLoop: RunLoop
  private let lock = NSLock()
  private var tasks: [() -> Void] = []
  private var timer: Timer!

  /// The doorbell of `runLoop`, made (and its timer added) at the first use.
  static func of(_ runLoop: RunLoop) -> RunLoopDoorbell {
    lock.withLock {
      if let doorbell = all[ObjectIdentifier(runLoop)] { return doorbell }
      let doorbell = RunLoopDoorbell(runLoop)
      all[ObjectIdentifier(runLoop)] = doorbell
      return doorbell
    }
  }

  private init(_ runLoop: RunLoop) {
    self.runLoop = runLoop
    timer = Timer(fire: .distantFuture, interval: 1e9, repeats: true) { [unowned self] _ in
      runTasks()
    }
    runLoop.add(timer, forMode: .common)
  }

  /// Queues `task` and wakes the run loop (after queuing: a ring that finds the queue empty
  /// is harmless, a task queued after the last ring would wait).
  func schedule(_ task: @escaping () -> Void) {
    lock.withLock { tasks.append(task) }
    timer.fireDate = Date()
  }

  /// On the run loop's thread: runs what was queued, first queued first.
  private func runTasks() {
    let ready = lock.withLock {
      defer { tasks = [] }
      return tasks
    }
    for task in ready { task() }
  }
}
