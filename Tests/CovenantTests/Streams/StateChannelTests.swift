import Covenant
import CovenantTesting
import XCTest

/// `StateChannel`: a current value, and receivers of it (current value first, then conflated,
/// repeats skipped for `Equatable` values) — Kotlin's `StateFlow`.
final class StateChannelTests: XCTestCase {
  func testUpdatesStartWithTheCurrentValueThenFollowChanges() {
    let state = StateChannel(1)
    let updates = state.updates()
    XCTAssertEqual(updates.poll(), 1)
    XCTAssertNil(updates.poll())
    state.value = 2
    XCTAssertEqual(updates.poll(), 2)
    XCTAssertEqual(state.value, 2)
  }

  func testASlowSubscriberGetsTheLatestValueNotABacklog() {
    let state = StateChannel("a")
    let updates = state.updates()
    XCTAssertEqual(updates.poll(), "a")
    state.value = "b"
    state.value = "c"
    state.value = "d"
    XCTAssertEqual(updates.poll(), "d")
    XCTAssertNil(updates.poll())
  }

  func testEqualValuesAreSkippedForEquatableValues() {
    let state = StateChannel(1)
    let updates = state.updates()
    XCTAssertEqual(updates.poll(), 1)
    state.value = 1
    XCTAssertNil(updates.poll(), "setting an equal value changes nothing")
    state.value = 2
    state.value = 1  // A, B, A while the subscriber was away: A again is no news
    XCTAssertNil(updates.poll())
    state.value = 3
    XCTAssertEqual(updates.poll(), 3)
  }

  func testValuesThatAreNotEquatableAreAllChanges() {
    struct Opaque: Sendable { let n: Int }
    let state = StateChannel(Opaque(n: 1))
    let updates = state.updates()
    XCTAssertEqual(updates.poll()?.n, 1)
    state.value = Opaque(n: 1)
    XCTAssertEqual(updates.poll()?.n, 1)
  }

  func testACoroutineWaitsForTheNextChange() {
    let scheduler = TestScheduler()
    let state = StateChannel(0)
    let timeline = record(state.updates(), on: scheduler)
    scheduler.run()
    scheduler.startCoroutine {
      try Coroutine.delay(.milliseconds(10))
      state.value = 1
      try Coroutine.delay(.milliseconds(10))
      state.value = 2
    }
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(timeline.values, [0, 1, 2])
    XCTAssertEqual(timeline.times, [0, 10, 20])
  }

  func testCallbacksFuturesAndSelectFollowTheState() throws {
    let scheduler = TestScheduler()
    let state = StateChannel(10)
    let updates = state.updates()
    let got = Recorder<String>()
    updates.whenReceive { got.append("\($0)") }
    XCTAssertEqual(got.elements, ["success(10)"])
    let future = updates.receiveFuture()
    XCTAssertNil(future.result)
    state.value = 11
    XCTAssertEqual(try future.result?.get(), 11)
    let cancelled = updates.receiveFuture()
    cancelled.cancel()
    state.value = 12
    XCTAssertEqual(updates.poll(), 12, "a cancelled future takes nothing")
    let selected = Recorder<String>()
    scheduler.startCoroutine {
      selected.append(try CoChannel.select { $0.onReceive(updates) { "selected \($0)" } })
    }
    scheduler.run()
    state.value = 12  // equal: no wake-up
    scheduler.run()
    XCTAssertEqual(selected.elements, [])
    state.value = 13
    scheduler.run()
    XCTAssertEqual(selected.elements, ["selected 13"])
  }

  func testCancellingAnUpdatesReceiverEndsOnlyThatSubscription() {
    let state = StateChannel(0)
    let kept = state.updates()
    let cancelled = state.updates()
    XCTAssertEqual(cancelled.poll(), 0)
    cancelled.cancel()
    state.value = 1
    XCTAssertNil(cancelled.poll())
    XCTAssertTrue(cancelled.isCanceled)
    XCTAssertEqual(drain(cancelled).end as? CoChannelError, .canceled)
    XCTAssertEqual(kept.poll(), 1)
    XCTAssertEqual(state.value, 1)
  }

  func testSetsFromManyThreadsEndWithTheLastValueSeenByEverySubscriber() {
    let state = StateChannel(0)
    let subscribers = (0..<3).map { _ in state.updates() }
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      for step in 1...500 { state.value = thread * 1_000 + step }
    }
    state.value = -1
    for subscriber in subscribers {
      var last: Int?
      while let value = subscriber.poll() { last = value }
      XCTAssertEqual(last, -1)
    }
  }
}
