import Covenant
import Dispatch
import Foundation
import XCTest

/// A scheduler over a tagged serial queue that counts the tasks it is given; it serves as a
/// task executor only when `servesTasks` (the conformance is on the subclass below).
private class CountingScheduler: CoroutineScheduler, @unchecked Sendable {
  let queue: DispatchQueue
  let key = DispatchSpecificKey<String>()
  let scheduled = Locked(0)

  init(_ label: String) {
    queue = DispatchQueue(label: label)
    queue.setSpecific(key: key, value: label)
  }

  /// Whether the calling code runs on this scheduler's queue.
  var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }

  func scheduleTask(_ task: @escaping () -> Void) {
    scheduled.withLock { $0 += 1 }
    queue.scheduleTask(task)
  }

  func scheduleTask(after delay: DispatchTimeInterval, _ task: @escaping () -> Void)
    -> any CoroutineTimer
  {
    queue.scheduleTask(after: delay, task)
  }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class CountingTaskScheduler: CountingScheduler, TaskExecutorScheduler,
  @unchecked Sendable
{
  var taskExecutor: any TaskExecutor { CoroutineSchedulerTaskExecutor(self) }
}

/// `Coroutine.awaitAsync` runs its task on the coroutine's scheduler when the scheduler can
/// serve as a task executor (no thread hop), and on the global executor otherwise.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class TaskExecutorSchedulerTests: XCTestCase {
  func testAwaitAsyncFromAQueueRunsTheTaskOnThatQueue() {
    let (queue, key) = DispatchQueue.tagged("loop")
    let seen = Recorder<String>()
    coRun(on: queue) {
      let label = try Coroutine.awaitAsync { () async -> String? in
        let first = DispatchQueue.getSpecific(key: key)
        await Task.yield()  // a second job of the task: still on the queue
        return first.map { "\($0), then \(DispatchQueue.getSpecific(key: key) ?? "elsewhere")" }
      }
      seen.append(label ?? "elsewhere")
      seen.append(DispatchQueue.getSpecific(key: key) ?? "elsewhere")
    }
    XCTAssertEqual(seen.elements, ["loop, then loop", "loop"])
  }

  func testAConformingSchedulerRunsEveryJobOfTheTaskWithNoHop() {
    // Hops counted: every job of the task and every slice of the coroutine goes through the
    // scheduler, and none of them runs off its queue.
    let scheduler = CountingTaskScheduler("counting")
    let offLoop = Locked(0)
    let done = DispatchSemaphore(value: 0)
    let calls = 3
    scheduler.startCoroutine {
      for _ in 0..<calls {
        let value = try Coroutine.awaitAsync { () async -> Int in
          if !scheduler.isCurrent { offLoop.withLock { $0 += 1 } }
          await Task.yield()
          if !scheduler.isCurrent { offLoop.withLock { $0 += 1 } }
          return 7
        }
        XCTAssertEqual(value, 7)
        if !scheduler.isCurrent { offLoop.withLock { $0 += 1 } }
      }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
    XCTAssertEqual(offLoop.withLock { $0 }, 0, "thread hops off the scheduler")
    // Per call at least: the task's first job, its job after the yield, the coroutine's resume.
    XCTAssertGreaterThanOrEqual(scheduler.scheduled.withLock { $0 }, 1 + 3 * calls)
  }

  func testANonConformingSchedulerLeavesTheTaskOnTheGlobalExecutor() {
    let scheduler = CountingScheduler("plain")
    let ranOnScheduler = Box<Bool?>(nil)
    let resumedOnScheduler = Box<Bool?>(nil)
    let done = DispatchSemaphore(value: 0)
    scheduler.startCoroutine {
      ranOnScheduler.value = try Coroutine.awaitAsync { scheduler.isCurrent }
      resumedOnScheduler.value = scheduler.isCurrent
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
    XCTAssertEqual(ranOnScheduler.value, false)
    XCTAssertEqual(resumedOnScheduler.value, true)
  }

  func testCancellingTheCoroutineCancelsATaskOnItsScheduler() {
    let (queue, _) = DispatchQueue.tagged("cancel")
    let scope = CoScope()
    let outcome = Box<String?>(nil)
    let taskCancelled = DispatchSemaphore(value: 0)
    let started = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine(in: scope) {
      do {
        try Coroutine.awaitAsync { () async throws -> Void in
          started.signal()
          do { try await Task.sleep(nanoseconds: 60_000_000_000) } catch { taskCancelled.signal() }
        }
        outcome.value = "returned"
      } catch {
        outcome.value = "\(error)"
      }
      done.signal()
    }
    started.wait()
    scope.cancel()
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
    XCTAssertEqual(taskCancelled.wait(timeout: .now() + 20), .success, "the task was cancelled")
  }

  func testTheExecutorRunsATaskOnItsScheduler() async {
    let (queue, key) = DispatchQueue.tagged("executor")
    let executor = CoroutineSchedulerTaskExecutor(queue)
    let label = await Task(executorPreference: executor) { () async -> String? in
      await Task.yield()
      return DispatchQueue.getSpecific(key: key)
    }.value
    XCTAssertEqual(label, "executor")
    XCTAssertTrue(executor.scheduler is DispatchQueue)
  }

  func testADispatchQueueHandsOutAnExecutorOnItself() async {
    let (queue, key) = DispatchQueue.tagged("queue-executor")
    let label = await withTaskExecutorPreference(queue.taskExecutor) {
      DispatchQueue.getSpecific(key: key)
    }
    XCTAssertEqual(label, "queue-executor")
  }
}
