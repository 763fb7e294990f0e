import Covenant
import CovenantTesting
import XCTest

/// `debounce`, `throttle`, `chunked(byCount:orWithin:)` and `timeout` on a `TestScheduler`:
/// every element at its exact virtual time (milliseconds).
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
final class TimeOperatorTests: XCTestCase {
  private func run<T: Sendable>(
    _ events: [(at: Int, value: Int)], closeAt: Int?, until end: Int,
    _ stage: (CoChannel<Int>.Receiver) -> CoChannel<T>.Receiver
  ) -> (Timeline<T>, CoChannel<Int>) {
    let scheduler = TestScheduler()
    let upstream = CoChannel<Int>()
    let timeline = record(stage(upstream.receiver), on: scheduler)
    produce(events, into: upstream, closeAt: closeAt, on: scheduler)
    scheduler.advance(by: .milliseconds(end))
    return (timeline, upstream)
  }

  func testDebounceHandsEachElementOverAfterAQuietInterval() {
    let (timeline, _) = run(
      [(0, 1), (30, 2), (60, 3), (300, 4), (350, 5)], closeAt: 1_000, until: 2_000
    ) { $0.debounce(for: .milliseconds(100)) }
    XCTAssertEqual(timeline.values, [3, 5])
    XCTAssertEqual(timeline.times, [160, 450])
    XCTAssertEqual(timeline.end?.error, "closed")
    XCTAssertEqual(timeline.end?.time, 1_000)
  }

  func testDebounceHandsTheWaitingElementOverAtOnceWhenUpstreamCloses() {
    let (timeline, _) = run([(0, 1), (20, 2)], closeAt: 50, until: 1_000) {
      $0.debounce(for: .milliseconds(100))
    }
    XCTAssertEqual(timeline.values, [2])
    XCTAssertEqual(timeline.times, [50])
    XCTAssertEqual(timeline.end?.time, 50)
  }

  func testDebounceDropsTheWaitingElementWhenUpstreamIsCancelled() {
    let scheduler = TestScheduler()
    let upstream = CoChannel<Int>()
    let timeline = record(upstream.receiver.debounce(for: .milliseconds(100)), on: scheduler)
    produce([(0, 1)], into: upstream, on: scheduler)
    scheduler.advance(by: .milliseconds(50))
    upstream.cancel()
    scheduler.advance(by: .milliseconds(500))
    XCTAssertEqual(timeline.values, [])
    XCTAssertEqual(timeline.end?.error, "canceled")
    XCTAssertEqual(timeline.end?.time, 50)
  }

  func testThrottleLatestHandsOverTheFirstAtOnceThenTheLatestAtEachIntervalsEnd() {
    let events = [(0, 1), (10, 2), (50, 3), (120, 4), (250, 5), (420, 6)]
    let (timeline, _) = run(events, closeAt: 1_000, until: 2_000) {
      $0.throttle(for: .milliseconds(100), latest: true)
    }
    XCTAssertEqual(timeline.values, [1, 3, 4, 5, 6])
    XCTAssertEqual(timeline.times, [0, 100, 200, 300, 420])
    XCTAssertEqual(timeline.end?.time, 1_000)
  }

  func testThrottleFirstHandsOverTheFirstElementOfEachInterval() {
    let events = [(0, 1), (10, 2), (50, 3), (120, 4), (250, 5), (420, 6)]
    let (timeline, _) = run(events, closeAt: 1_000, until: 2_000) {
      $0.throttle(for: .milliseconds(100), latest: false)
    }
    XCTAssertEqual(timeline.values, [1, 2, 4, 5, 6])
    XCTAssertEqual(timeline.times, [0, 100, 200, 300, 420])
  }

  func testThrottleHandsTheKeptElementOverAtOnceWhenUpstreamCloses() {
    let (timeline, _) = run([(0, 1), (10, 2), (20, 3)], closeAt: 40, until: 1_000) {
      $0.throttle(for: .milliseconds(100))
    }
    XCTAssertEqual(timeline.values, [1, 3])
    XCTAssertEqual(timeline.times, [0, 40])
    XCTAssertEqual(timeline.end?.time, 40)
  }

  func testChunkedByCountOrWithinHandsAChunkOverWhenFullOrOldEnough() {
    let events = [(0, 1), (10, 2), (20, 3), (50, 4), (200, 5), (250, 6)]
    let (timeline, _) = run(events, closeAt: 280, until: 1_000) {
      $0.chunked(byCount: 3, orWithin: .milliseconds(100))
    }
    XCTAssertEqual(timeline.entries.map(\.0), [[1, 2, 3], [4], [5, 6]])
    XCTAssertEqual(timeline.times, [20, 150, 280])
    XCTAssertEqual(timeline.end?.error, "closed")
    XCTAssertEqual(timeline.end?.time, 280)
  }

  func testChunkedByCountOfOneHandsEachElementOverAtOnce() {
    let (timeline, _) = run([(0, 1), (30, 2)], closeAt: 40, until: 1_000) {
      $0.chunked(byCount: 1, orWithin: .milliseconds(100))
    }
    XCTAssertEqual(timeline.entries.map(\.0), [[1], [2]])
    XCTAssertEqual(timeline.times, [0, 30])
  }

  func testTimeoutEndsTheStreamAnIntervalAfterThePreviousElementAndCancelsUpstream() {
    let (timeline, upstream) = run([(0, 1), (50, 2), (140, 3)], closeAt: nil, until: 1_000) {
      $0.timeout(.milliseconds(100))
    }
    XCTAssertEqual(timeline.values, [1, 2, 3])
    XCTAssertEqual(timeline.times, [0, 50, 140])
    XCTAssertEqual(timeline.end?.error, "timeout")
    XCTAssertEqual(timeline.end?.time, 240)
    XCTAssertTrue(upstream.isCanceled)
  }

  func testTimeoutDoesNotCountTheTimeAnElementWaitsForASlowConsumer() {
    let scheduler = TestScheduler()
    let upstream = filledChannel([1, 2, 3], closed: false)
    let limited = upstream.receiver.timeout(.milliseconds(100))
    let times = Recorder<Int>()
    let ending = Recorder<String>()
    scheduler.startCoroutine {
      do {
        while true {
          _ = try limited.awaitReceive()
          times.append(milliseconds(scheduler.now))
          try Coroutine.delay(.milliseconds(500))  // far longer than the timeout
        }
      } catch {
        ending.append("\(error) at \(milliseconds(scheduler.now))")
      }
    }
    scheduler.advance(by: .milliseconds(1_099))
    XCTAssertFalse(limited.isClosed)
    scheduler.advance(by: .milliseconds(1))  // 100 ms after the third element was handed over
    XCTAssertTrue(limited.isClosed)
    scheduler.advance(by: .seconds(10))
    // Elements waiting upstream while the consumer was busy did not time out.
    XCTAssertEqual(times.elements, [0, 500, 1_000])
    XCTAssertEqual(ending.elements, ["timeout at 1500"])
  }

  func testTheStageRunsOnTheSchedulerOfTheFirstCoroutineUsingIt() {
    // Nothing moves while the test scheduler's clock stands still, although the stage was made
    // on another thread's time.
    let scheduler = TestScheduler()
    let upstream = filledChannel([1], closed: false)
    let debounced = upstream.receiver.debounce(for: .seconds(1))
    let timeline = record(debounced, on: scheduler)
    scheduler.run()
    Thread.sleep(forTimeInterval: 0.05)
    scheduler.run()
    XCTAssertEqual(timeline.values, [])
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(timeline.values, [1])
    XCTAssertEqual(timeline.times, [1_000])
    upstream.close()
    scheduler.run()
    XCTAssertEqual(timeline.end?.error, "closed")
  }
}
