import Covenant
import Foundation

/// Stands in for `DispatchQueue.main` while `runCoroutine` waits on the main queue: the
/// coroutine's tasks are queued here and run by the waiting loop itself.
///
/// Why: the waiting code may itself be running in a main-queue block (a `@MainActor` test, in
/// Swift Testing for instance), and then the main queue cannot run anything else until it
/// returns. Running the tasks directly works there as well as on a plain main thread (XCTest).
/// Once the wait is over, tasks that still arrive (a coroutine abandoned after a timeout) go to
/// the real main queue.
final class MainQueueStandIn: CoroutineScheduler, @unchecked Sendable {
  // `@unchecked Sendable`: all mutable state is inside the mutex.
  private struct State: @unchecked Sendable {
    var tasks: [() -> Void] = []
    var isForwarding = false
  }

  private let state = InlineMutex(State())
  private let wake: @Sendable () -> Void

  /// - Parameter wake: called (from any thread) whenever a task is queued.
  init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

  func scheduleTask(_ task: @escaping () -> Void) {
    let forward = state.withLock { state -> Bool in
      if state.isForwarding { return true }
      state.tasks.append(task)
      return false
    }
    if forward { DispatchQueue.main.scheduleTask(task) } else { wake() }
  }

  /// Runs the queued tasks (and those they queue) on the calling thread.
  func drain() {
    while true {
      let batch = state.withLock { state -> TaskBatch in
        defer { state.tasks = [] }
        return TaskBatch(tasks: state.tasks)
      }
      if batch.tasks.isEmpty { return }
      for task in batch.tasks { task() }
    }
  }

  /// From now on, hands every task to the real main queue (the leftovers too).
  func stop() {
    let leftovers = state.withLock { state -> TaskBatch in
      state.isForwarding = true
      defer { state.tasks = [] }
      return TaskBatch(tasks: state.tasks)
    }
    for task in leftovers.tasks { DispatchQueue.main.scheduleTask(task) }
  }

  /// Whether the calling code runs on the main queue: in one of its blocks, or on the main
  /// thread (which libdispatch counts as the main queue's).
  static var isOnMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueueKey) == true }

  /// Whether `scheduler` is the main queue. (Not by identity: on Linux every
  /// `DispatchQueue.main` access returns a new wrapper of the same queue.)
  static func isMainQueue(_ scheduler: any CoroutineScheduler) -> Bool {
    guard let queue = scheduler as? DispatchQueue else { return false }
    _ = mainQueueKey  // make sure the main queue carries the key
    return queue.getSpecific(key: mainQueueKey) == true
  }
}

/// A queue-specific key set on the main queue only, to recognise it.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

/// A batch of tasks moved out of the mutex; run by one thread.
private struct TaskBatch: @unchecked Sendable {
  let tasks: [() -> Void]
}
