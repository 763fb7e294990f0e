import Covenant
import CovenantTesting
import Foundation
import XCTest

/// `Coroutine.awaitWakeUp` and `CoroutineWakeUp`: the wait on a wake-up handle kept by the
/// caller (CovenantNIO's channels keep their readers' and writers' this way).
final class CoroutineWakeUpTests: XCTestCase {
  private let queue = DispatchQueue(label: "CoroutineWakeUpTests")

  /// Runs `body` in a coroutine on `queue` and waits for it.
  private func runCoroutine(
    _ body: @escaping @Sendable () throws -> Void, file: StaticString = #filePath,
    line: UInt = #line
  ) {
    let done = expectation(description: "coroutine finished")
    queue.startCoroutine {
      do { try body() } catch { XCTFail("unexpected error \(error)", file: file, line: line) }
      done.fulfill()
    }
    wait(for: [done], timeout: 10)
  }

  func testResumeFromAnotherThreadEndsTheWait() {
    runCoroutine {
      let woken = try Coroutine.awaitWakeUp { wakeUp in
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) {
          XCTAssertTrue(wakeUp.resume())
        }
      }
      XCTAssertTrue(woken)
    }
  }

  func testResumeBeforeSuspendingDoesNotSwitchOut() {
    runCoroutine {
      XCTAssertTrue(try Coroutine.awaitWakeUp { XCTAssertTrue($0.resume()) })
    }
  }

  func testTimeoutEndsTheWaitAndLaterResumesDoNothing() {
    let kept = Box<CoroutineWakeUp?>(nil)
    runCoroutine {
      let woken = try Coroutine.awaitWakeUp(timeout: .milliseconds(10)) { kept.value = $0 }
      XCTAssertFalse(woken)
      XCTAssertFalse(kept.value!.resume(), "the timeout won the wait")
      // A stale wake-up cannot end a later wait.
      let later = try Coroutine.awaitWakeUp(timeout: .milliseconds(30)) { _ in
        XCTAssertFalse(kept.value!.resume())
      }
      XCTAssertFalse(later)
    }
  }

  func testResumeTwiceIsHonouredOnce() {
    runCoroutine {
      var wakeUp: CoroutineWakeUp?
      XCTAssertTrue(
        try Coroutine.awaitWakeUp {
          wakeUp = $0
          $0.resume()
        })
      XCTAssertFalse(wakeUp!.resume())
    }
  }

  func testCancellationThrowsCanceled() {
    let scope = CoScope()
    let outcome = expectation(description: "cancelled")
    queue.startCoroutine(in: scope) {
      XCTAssertThrowsError(try Coroutine.awaitWakeUp { _ in }) {
        XCTAssertEqual($0 as? CoroutineError, .canceled)
      }
      outcome.fulfill()
    }
    queue.asyncAfter(deadline: .now() + 0.01) { scope.cancel() }
    wait(for: [outcome], timeout: 10)
  }

  func testOutsideACoroutineThrows() {
    XCTAssertThrowsError(try Coroutine.awaitWakeUp { _ in }) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  func testSnapshotsShowTheAwaitedType() throws {
    let scope = CoScope()
    let waiting = expectation(description: "waiting")
    queue.startCoroutine(in: scope, name: "wake-up waiter") {
      _ = try Coroutine.awaitWakeUp(waitingFor: Int.self) { _ in waiting.fulfill() }
    }
    wait(for: [waiting], timeout: 10)
    var info: CoroutineInfo?
    for _ in 0..<1_000 {
      info = CoroutineSnapshot.take().coroutines.first { $0.name == "wake-up waiter" }
      if info?.state == .suspended { break }
      usleep(1_000)
    }
    XCTAssertEqual(info?.wait, .callback(valueType: "Int"))
    scope.cancel()
  }

  /// `Coroutine.runAsTask`: the first coroutine its body wakes continues right after the body,
  /// inside the call, without a task of the scheduler; the next ones are scheduled as usual.
  func testRunAsTaskContinuesTheFirstWokenCoroutineInPlace() {
    let scheduler = TestScheduler()
    let wakeUps = Box<[CoroutineWakeUp]>([])
    let steps = Box<[String]>([])
    for name in ["first", "second"] {
      scheduler.startCoroutine {
        XCTAssertTrue(try Coroutine.awaitWakeUp { wakeUps.value.append($0) })
        steps.value.append(name)
      }
    }
    scheduler.run()  // both start and wait
    XCTAssertEqual(wakeUps.value.count, 2)
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
    Coroutine.runAsTask(of: scheduler) {
      XCTAssertTrue(wakeUps.value[0].resume())
      XCTAssertTrue(wakeUps.value[1].resume())
      steps.value.append("body")
    }
    XCTAssertEqual(steps.value, ["body", "first"], "the first woken ran after the body, in place")
    XCTAssertEqual(scheduler.pendingTaskCount, 1, "the second went through scheduleTask")
    scheduler.run()
    XCTAssertEqual(steps.value, ["body", "first", "second"])
  }

  /// A coroutine of another scheduler woken in the body is not run in place.
  func testRunAsTaskLeavesOtherSchedulersCoroutinesToThem() {
    let scheduler = TestScheduler()
    let other = TestScheduler()
    let wakeUp = Box<CoroutineWakeUp?>(nil)
    let woken = Box(false)
    other.startCoroutine {
      XCTAssertTrue(try Coroutine.awaitWakeUp { wakeUp.value = $0 })
      woken.value = true
    }
    other.run()
    Coroutine.runAsTask(of: scheduler) { XCTAssertTrue(wakeUp.value!.resume()) }
    XCTAssertFalse(woken.value)
    XCTAssertEqual(other.pendingTaskCount, 1)
    other.run()
    XCTAssertTrue(woken.value)
  }
}
