import Covenant
import CovenantTesting
import Dispatch
import XCTest

/// `TestScheduler`'s `Duration` API: `advance(by:)`, `advance(to:)` and `elapsed`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class TestSchedulerDurationTests: XCTestCase {
  func testElapsedReadsTheClockAsADuration() {
    let scheduler = TestScheduler()
    XCTAssertEqual(scheduler.elapsed, .zero)
    scheduler.advance(by: .milliseconds(1_500))  // the DispatchTimeInterval form
    XCTAssertEqual(scheduler.elapsed, .seconds(1.5))
    XCTAssertEqual(scheduler.now, .milliseconds(1_500))
  }

  func testAdvanceByADurationRunsWhatFallsDueAtItsTime() {
    let scheduler = TestScheduler()
    let seen = Box<[Duration]>([])
    scheduler.scheduleTask(after: .milliseconds(250)) { seen.value.append(scheduler.elapsed) }
    scheduler.scheduleTask(after: .seconds(1)) { seen.value.append(scheduler.elapsed) }
    let step: Duration = .milliseconds(125)
    scheduler.advance(by: step * 2)
    XCTAssertEqual(seen.value, [.milliseconds(250)])
    scheduler.advance(by: step * 6)
    XCTAssertEqual(seen.value, [.milliseconds(250), .seconds(1)])
    XCTAssertEqual(scheduler.elapsed, .seconds(1))
    scheduler.advance(by: Duration.zero)
    XCTAssertEqual(scheduler.elapsed, .seconds(1))
  }

  func testAdvanceToADuration() {
    let scheduler = TestScheduler()
    let woke = Box<Duration?>(nil)
    scheduler.startCoroutine {
      try Coroutine.delay(.seconds(2.5))
      woke.value = scheduler.elapsed
    }
    scheduler.advance(to: Duration.seconds(2))
    XCTAssertNil(woke.value)
    scheduler.advance(to: Duration.seconds(3))
    XCTAssertEqual(woke.value, .seconds(2.5))
    XCTAssertEqual(scheduler.elapsed, .seconds(3))
  }

  func testSubNanosecondDurationsRoundUpAsTheTimersDo() {
    let scheduler = TestScheduler()
    let ran = Box(false)
    scheduler.scheduleTask(after: .nanoseconds(1)) { ran.value = true }
    scheduler.advance(by: Duration.nanoseconds(1) / 2)  // half a nanosecond: one, rounded up
    XCTAssertTrue(ran.value)
    XCTAssertEqual(scheduler.elapsed, .nanoseconds(1))
  }
}
