import Covenant
import Dispatch
import Foundation
import XCTest

private enum Trace {
  @TaskLocal static var span: String?
  static let coroutineSpan = CoroutineLocal(bridging: $span)
}

/// A scheduler that cannot serve as a task executor: `awaitAsync`'s task runs on the global
/// executor, away from the coroutine's thread.
private final class PlainScheduler: CoroutineScheduler, @unchecked Sendable {
  let queue = DispatchQueue(label: "plain")
  func scheduleTask(_ task: @escaping () -> Void) { queue.scheduleTask(task) }
  func scheduleTask(after delay: DispatchTimeInterval, _ task: @escaping () -> Void)
    -> any CoroutineTimer
  {
    queue.scheduleTask(after: delay, task)
  }
}

/// A coroutine-local declared over a `TaskLocal` is one value with it, both ways.
final class CoroutineLocalBridgingTests: XCTestCase {
  private func runBoth(_ body: @escaping @Sendable () throws -> Void) {
    for scheduler: any CoroutineScheduler in [DispatchQueue(label: "bridge"), PlainScheduler()] {
      let done = DispatchSemaphore(value: 0)
      scheduler.startCoroutine {
        do { try body() } catch { XCTFail("coroutine threw \(error)") }
        done.signal()
      }
      XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "\(scheduler)")
    }
  }

  func testACoroutineBindingIsTheTaskLocalInTheCoroutine() {
    runBoth {
      XCTAssertNil(Trace.span)
      Trace.coroutineSpan.withValue("c") {
        XCTAssertEqual(Trace.span, "c")
        XCTAssertEqual(Trace.coroutineSpan.value, "c")
        try? Coroutine.yield()
        XCTAssertEqual(Trace.span, "c", "bound again when the coroutine resumes")
      }
      XCTAssertNil(Trace.span)
      XCTAssertNil(Trace.coroutineSpan.value)
    }
  }

  func testACoroutineBindingReachesAwaitAsyncsTask() {
    // On both paths: the coroutine's scheduler as the task's executor, and the global one.
    let seen = Recorder<String>()
    runBoth {
      try Trace.coroutineSpan.withValue("outer") {
        seen.append(try Coroutine.awaitAsync { Trace.span ?? "nil" })
        try Trace.coroutineSpan.withValue("inner") {
          seen.append(try Coroutine.awaitAsync { Trace.span ?? "nil" })
        }
        seen.append(try Coroutine.awaitAsync { Trace.span ?? "nil" })
      }
      seen.append(try Coroutine.awaitAsync { Trace.span ?? "nil" })
    }
    XCTAssertEqual(
      seen.elements, Array(repeating: ["outer", "inner", "outer", "nil"], count: 2).flatMap { $0 })
  }

  func testACoroutineBindingReachesACoFuturesTask() {
    let seen = Recorder<String>()
    runBoth {
      let future = Trace.coroutineSpan.withValue("future") {
        CoFuture(operation: { () async -> String in Trace.span ?? "nil" })
      }
      seen.append(try future.await())
    }
    XCTAssertEqual(seen.elements, ["future", "future"])
  }

  func testATaskBindingReachesTheCoroutinesItStarts() async {
    let seen = Recorder<String>()
    let done = DispatchGroup()
    done.enter()
    Trace.$span.withValue("task") {
      DispatchQueue(label: "from-task").startCoroutine {
        seen.append(Trace.coroutineSpan.value ?? "nil")
        try? Coroutine.yield()
        seen.append(Trace.span ?? "nil")
        done.leave()
      }
    }
    await withCheckedContinuation { continuation in
      done.notify(queue: .global()) { continuation.resume() }
    }
    XCTAssertEqual(seen.elements, ["task", "task"])
  }

  func testABindingDoesNotLeakToTheNextCoroutineOnTheThread() {
    let queue = DispatchQueue(label: "serial")
    let seen = Recorder<String>()
    let gate = CoPromise<Void>()
    let done = DispatchGroup()
    done.enter()
    queue.startCoroutine {
      Trace.coroutineSpan.withValue("first") { _ = try? gate.await() }
      done.leave()
    }
    done.enter()
    queue.startCoroutine {
      seen.append(Trace.span ?? "nil")
      seen.append(Trace.coroutineSpan.value ?? "nil")
      gate.success(())
      done.leave()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
    XCTAssertEqual(seen.elements, ["nil", "nil"])
  }
}
