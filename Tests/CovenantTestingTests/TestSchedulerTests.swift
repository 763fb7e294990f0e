import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

private struct Unavailable: Error {}

/// Virtual time: delays, timeouts, timers, ordering, and the library's waits on a
/// `TestScheduler`. Every test here spans seconds to an hour of virtual time and runs in
/// milliseconds of real time.
final class TestSchedulerTests: XCTestCase {
  func testNothingRunsUntilTheTestSaysSo() {
    let scheduler = TestScheduler()
    let ran = Box(false)
    scheduler.startCoroutine { ran.value = true }
    XCTAssertFalse(ran.value)
    XCTAssertEqual(scheduler.pendingTaskCount, 1)
    scheduler.run()
    XCTAssertTrue(ran.value)
    XCTAssertEqual(scheduler.now, .seconds(0))
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }

  func testDelayTakesVirtualTime() {
    let scheduler = TestScheduler()
    let steps = Box<[String]>([])
    scheduler.startCoroutine {
      steps.value.append("start")
      try Coroutine.delay(.seconds(5))
      steps.value.append("after 5 s at \(scheduler.now == .seconds(5))")
      try Coroutine.delay(.milliseconds(250))
      steps.value.append("after 5.25 s")
    }
    scheduler.run()
    XCTAssertEqual(steps.value, ["start"])
    scheduler.advance(by: .milliseconds(4_999))
    XCTAssertEqual(steps.value, ["start"])
    scheduler.advance(by: .milliseconds(1))
    XCTAssertEqual(steps.value, ["start", "after 5 s at true"])
    scheduler.advance(to: .milliseconds(5_249))
    XCTAssertEqual(steps.value.count, 2)
    scheduler.advance(to: .milliseconds(5_250))
    XCTAssertEqual(steps.value.last, "after 5.25 s")
    XCTAssertEqual(scheduler.now, .milliseconds(5_250))
  }

  func testTasksRunInDueTimeOrderThenFirstComeFirstServed() {
    let scheduler = TestScheduler()
    let order = Box<[Int]>([])
    scheduler.scheduleTask(after: .seconds(2)) { order.value.append(4) }
    scheduler.scheduleTask(after: .seconds(1)) { order.value.append(2) }
    scheduler.scheduleTask(after: .seconds(1)) { order.value.append(3) }
    scheduler.scheduleTask { order.value.append(0) }
    scheduler.scheduleTask(after: .seconds(-3)) { order.value.append(1) }  // negative: now
    scheduler.scheduleTask(after: .never) { order.value.append(99) }
    scheduler.advance(by: .seconds(10))
    XCTAssertEqual(order.value, [0, 1, 2, 3, 4])
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "a .never task is not even queued")
  }

  func testTaskSeesItsDueTimeAndMayScheduleMore() {
    let scheduler = TestScheduler()
    let times = Box<[DispatchTimeInterval]>([])
    func tick(_ remaining: Int) {
      times.value.append(scheduler.now)
      guard remaining > 0 else { return }
      scheduler.scheduleTask(after: .seconds(1)) { tick(remaining - 1) }
    }
    scheduler.scheduleTask { tick(3) }
    scheduler.advance(by: .milliseconds(2_500))
    XCTAssertEqual(times.value, [.seconds(0), .seconds(1), .seconds(2)])
    XCTAssertEqual(scheduler.now, .milliseconds(2_500))
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(times.value.last, .seconds(3))
  }

  func testCancelledTimerNeverRunsAndReleasesItsTask() {
    let scheduler = TestScheduler()
    final class Payload: Sendable {}
    weak var weakPayload: Payload?
    let ran = Box(false)
    var timer: (any CoroutineTimer)?
    do {
      let payload = Payload()
      weakPayload = payload
      timer = scheduler.scheduleTask(after: .seconds(1)) {
        _ = payload
        ran.value = true
      }
    }
    XCTAssertNotNil(weakPayload)
    timer?.cancel()
    XCTAssertNil(weakPayload, "cancelling releases the task at once")
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
    scheduler.advance(by: .seconds(2))
    XCTAssertFalse(ran.value)
    timer?.cancel()  // harmless twice
  }

  func testAwaitTimeoutInVirtualTime() {
    let scheduler = TestScheduler()
    let reply = CoPromise<String>()
    let slow = scheduler.coroutineFuture { try reply.await(timeout: .seconds(30)) }
    let answered = CoPromise<String>()
    let fast = scheduler.coroutineFuture { try answered.await(timeout: .seconds(30)) }
    scheduler.run()
    scheduler.advance(by: .seconds(10))
    answered.success("in time")
    scheduler.run()
    XCTAssertEqual(try fast.result?.get(), "in time")
    XCTAssertEqual(scheduler.pendingTaskCount, 1, "the answered await's timer is gone")
    scheduler.advance(by: .seconds(19))
    XCTAssertNil(slow.result)
    scheduler.advance(by: .seconds(1))
    XCTAssertThrowsError(try slow.result?.get()) { XCTAssertEqual($0 as? CoFutureError, .timeout) }
    XCTAssertNil(reply.result, "the awaited future is left alone")
  }

  func testPromiseAwaitTimeoutInVirtualTime() {
    let scheduler = TestScheduler()
    let promise = Promise<Int>.pending()
    let outcome = scheduler.coroutineFuture { try promise.await(timeout: .milliseconds(100)) }
    scheduler.advance(by: .milliseconds(99))
    XCTAssertNil(outcome.result)
    scheduler.advance(by: .milliseconds(1))
    XCTAssertThrowsError(try outcome.result?.get()) {
      XCTAssertEqual($0 as? CoFutureError, .timeout)
    }
  }

  func testCancellingAScopeEndsADelayAndItsTimer() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let outcome = Box("")
    scheduler.startCoroutine(in: scope) {
      do { try Coroutine.delay(.seconds(3_600)) } catch { outcome.value = "\(error)" }
    }
    scheduler.run()
    XCTAssertEqual(scheduler.pendingTaskCount, 1)
    scope.cancel()
    scheduler.run()
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "the delay's timer was cancelled")
    XCTAssertEqual(scheduler.now, .seconds(0))
  }

  func testScopeDeadlineInVirtualTime() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    scope.cancel(after: .seconds(10), on: scheduler)
    let outcome = Box("")
    scheduler.startCoroutine(in: scope) {
      do {
        while true { try Coroutine.delay(.seconds(3)) }
      } catch {
        outcome.value = "canceled at \(scheduler.now == .seconds(10))"
      }
    }
    scheduler.advance(by: .seconds(9))
    XCTAssertFalse(scope.isCanceled)
    scheduler.advance(by: .seconds(1))
    XCTAssertTrue(scope.isCanceled)
    XCTAssertEqual(outcome.value, "canceled at true")
    XCTAssertEqual(scheduler.pendingTaskCount, 0)
  }

  func testSelectWithATimerInVirtualTime() {
    let scheduler = TestScheduler()
    let ticks = CoChannel<Int>()
    let outcomes = Box<[String]>([])
    scheduler.startCoroutine {
      for _ in 0..<3 {
        let outcome = try CoChannel.select { select in
          select.onReceive(ticks) { "tick \($0)" }
          select.onTimeout(.seconds(5)) { "quiet at 7 s: \(scheduler.now == .seconds(7))" }
        }
        outcomes.value.append(outcome)
      }
    }
    scheduler.run()
    scheduler.advance(by: .seconds(2))
    XCTAssertTrue(ticks.offer(1))
    scheduler.run()
    XCTAssertEqual(outcomes.value, ["tick 1"])
    scheduler.advance(by: .seconds(5))  // 5 s after the second select started
    XCTAssertEqual(outcomes.value.count, 2)
    XCTAssertEqual(outcomes.value.last, "quiet at 7 s: true")
    scheduler.advance(by: .seconds(4))
    XCTAssertEqual(outcomes.value.count, 2)
    XCTAssertTrue(ticks.offer(2))
    scheduler.run()
    XCTAssertEqual(outcomes.value.last, "tick 2")
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "the last select's timer was cancelled")
  }

  func testMutexAndSemaphoreTimeoutsInVirtualTime() {
    let scheduler = TestScheduler()
    let mutex = CoMutex()
    let permits = CoSemaphore(value: 0)
    let log = Box<[String]>([])
    scheduler.startCoroutine {
      try mutex.withLock {
        try Coroutine.delay(.seconds(60))
        log.value.append("holder done at \(scheduler.now == .seconds(60))")
      }
    }
    scheduler.startCoroutine {
      try mutex.withLock { log.value.append("waiter got it at \(scheduler.now == .seconds(60))") }
    }
    scheduler.startCoroutine {
      do {
        try permits.wait(timeout: .seconds(30))
      } catch {
        log.value.append("semaphore timed out at \(scheduler.now == .seconds(30))")
      }
    }
    scheduler.advance(by: .seconds(3_600))
    XCTAssertEqual(
      log.value,
      ["semaphore timed out at true", "holder done at true", "waiter got it at true"])
    XCTAssertEqual(permits.availablePermits, 0)
    XCTAssertFalse(mutex.isLocked)
  }

  func testGeneratorsAndChannelsRunOnTheTestThread() {
    let scheduler = TestScheduler()
    let channel = CoChannel<Int>(capacity: 1)
    XCTAssertTrue(Thread.isMainThread, "XCTest runs its tests on the main thread")
    let received = Box<[Int]>([])
    scheduler.startCoroutine {
      let squares = Generator<Int> { yield in
        for i in 1...4 { try yield(i * i) }
      }
      for square in squares {
        try Coroutine.delay(.seconds(1))
        try channel.awaitSend(square)
      }
      channel.close()
    }
    scheduler.startCoroutine {
      for value in channel.makeIterator() {
        XCTAssertTrue(Thread.isMainThread, "runs on the thread that calls advance")
        received.value.append(value)
      }
    }
    scheduler.advance(by: .seconds(2))
    XCTAssertEqual(received.value, [1, 4])
    scheduler.advance(by: .seconds(2))
    XCTAssertEqual(received.value, [1, 4, 9, 16])
  }

  /// Retry with exponential backoff, capped at five minutes, against a service that is down
  /// for the first 55 minutes: one virtual hour, checked at every attempt.
  func testBackoffLoopOverOneHour() throws {
    let scheduler = TestScheduler()
    let attempts = Box<[Int]>([])  // seconds since start, per attempt
    let serviceUpAt = 55 * 60
    let result = scheduler.coroutineFuture { () throws -> Int in
      var delay = 1
      while true {
        let now = Int(scheduler.nowSeconds)
        attempts.value.append(now)
        if now >= serviceUpAt { return attempts.value.count }
        try Coroutine.delay(.seconds(delay))
        delay = min(delay * 2, 300)
      }
    }
    var expected: [Int] = []
    var time = 0
    var delay = 1
    while time < serviceUpAt {
      expected.append(time)
      time += delay
      delay = min(delay * 2, 300)
    }
    expected.append(time)
    for (index, attempt) in expected.enumerated() {
      scheduler.advance(to: .seconds(attempt))
      XCTAssertEqual(attempts.value.count, index + 1, "attempt \(index) at \(attempt) s")
      XCTAssertEqual(attempts.value.last, attempt)
    }
    scheduler.advance(to: .seconds(3_600))
    XCTAssertEqual(try result.result?.get(), expected.count)
    XCTAssertEqual(attempts.value, expected)
  }
}

extension TestScheduler {
  /// `now` in whole seconds.
  fileprivate var nowSeconds: UInt64 {
    guard case .nanoseconds(let n) = now else { return 0 }
    return UInt64(n) / 1_000_000_000
  }
}

/// A value box for coroutine bodies to write and tests to read.
final class Box<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: T
  init(_ value: T) { stored = value }
  var value: T {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

final class TestSchedulerLifetimeTests: XCTestCase {
  /// A scheduler dropped with tasks still pending releases them (and what they hold).
  func testDroppedSchedulerReleasesItsPendingTasks() {
    final class Payload: Sendable {}
    weak var weakPayload: Payload?
    weak var weakScheduler: TestScheduler?
    do {
      let scheduler = TestScheduler()
      weakScheduler = scheduler
      let payload = Payload()
      weakPayload = payload
      scheduler.scheduleTask(after: .seconds(5)) { _ = payload }
      scheduler.scheduleTask { _ = payload }
    }
    XCTAssertNil(weakScheduler)
    XCTAssertNil(weakPayload)
  }

  /// A scheduler let go with a coroutine suspended on it (a delay) stays, with the coroutine,
  /// which the check for suspended coroutines reports (with its wait); cancelling the coroutine
  /// and running the scheduler once more ends it, and then the scheduler goes.
  func testDroppedSchedulerWithASuspendedCoroutineIsReportedUntilItIsCancelled() throws {
    let checkpoint = CoroutineSnapshot.nextID
    weak var weakScheduler: TestScheduler?
    let scope = CoScope()
    let ended = Box(false)
    do {
      let scheduler = TestScheduler()
      weakScheduler = scheduler
      scheduler.startCoroutine(in: scope, name: "sleeper") {
        defer { ended.value = true }
        try Coroutine.delay(.seconds(3600))
      }
      scheduler.run()
    }
    XCTAssertNotNil(weakScheduler, "the suspended coroutine keeps its scheduler")
    XCTAssertThrowsError(try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 0)) {
      let reported = ($0 as? SuspendedCoroutinesError)?.coroutines ?? []
      XCTAssertEqual(reported.map(\.name), ["sleeper"])
      XCTAssertEqual(reported.first?.state, .suspended)
      guard case .delay? = reported.first?.wait else {
        return XCTFail("reported waiting for \(String(describing: reported.first?.wait))")
      }
    }
    scope.cancel()
    weakScheduler?.run()
    XCTAssertTrue(ended.value)
    XCTAssertNil(weakScheduler)
    try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 0)
  }
}
