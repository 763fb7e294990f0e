import Covenant
import Foundation
import XCTest

/// A thread that runs its run loop until stopped, for `RunLoop` scheduler tests.
final class RunLoopThread: @unchecked Sendable {
  private let ready = DispatchSemaphore(value: 0)
  private(set) var runLoop: RunLoop!
  private(set) var thread: Thread!
  private let keepRunning = Box(true)

  static func started() -> RunLoopThread {
    let owner = RunLoopThread()
    let thread = Thread { [owner] in
      owner.runLoop = RunLoop.current
      // A run loop with no sources returns at once; the timer Covenant adds to a run loop it
      // schedules on keeps it alive.
      owner.runLoop.scheduleTask {}
      owner.ready.signal()
      while owner.keepRunning.value {
        _ = owner.runLoop.run(mode: .default, before: .distantFuture)
      }
    }
    owner.thread = thread
    thread.start()
    owner.ready.wait()
    return owner
  }

  func stop() {
    keepRunning.value = false
    runLoop.scheduleTask {}  // wakes the loop so it sees the flag
  }
}

/// A scheduler written the way `CoroutineScheduler`'s documentation shows for NSManagedObjectContext.
final class PerformingContext: @unchecked Sendable {
  let queue = DispatchQueue(label: "PerformingContext")
  let key = DispatchSpecificKey<Bool>()
  init() { queue.setSpecific(key: key, value: true) }
  func perform(_ block: @escaping () -> Void) {
    let block = UnsafeTransfer(block)
    queue.async { block.value() }
  }
  var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

extension PerformingContext: CoroutineScheduler {
  func scheduleTask(_ task: @escaping () -> Void) { perform(task) }
}

struct UnsafeTransfer<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}

/// A counter safe to bump from any thread.
final class HitCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  func increment() { lock.withLock { count += 1 } }
  var value: Int { lock.withLock { count } }
}

/// A value box for coroutine bodies to write and tests to read after waiting.
final class Box<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: T
  init(_ value: T) { stored = value }
  var value: T {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

extension DispatchQueue {
  /// A queue tagged so tests can tell they run on it.
  static func tagged(_ label: String, attributes: DispatchQueue.Attributes = []) -> (
    DispatchQueue, DispatchSpecificKey<String>
  ) {
    let queue = DispatchQueue(label: label, attributes: attributes)
    let key = DispatchSpecificKey<String>()
    queue.setSpecific(key: key, value: label)
    return (queue, key)
  }
}

/// A value behind the library's lock (`InlineMutex`), in a class: closures and coroutines share
/// it by reference. Its critical sections are the library's (`withCriticalSection`), so the tests
/// that hammer it from many coroutines exercise that lock and its ThreadSanitizer annotations.
final class Locked<T>: @unchecked Sendable {
  private let storage: InlineMutex<T>
  init(_ value: T) { storage = InlineMutex(value) }
  func withLock<R, E: Error>(_ body: (inout T) throws(E) -> R) throws(E) -> R {
    try storage.withCriticalSection(body)
  }
}
