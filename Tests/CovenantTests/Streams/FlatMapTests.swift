import Covenant
import CovenantTesting
import XCTest

/// `flatMapMerge(maxConcurrent:_:)` and `flatMapLatest(_:)`.
final class FlatMapTests: XCTestCase {
  func testFlatMapMergeReadsAtMostMaxConcurrentInnerReceiversAtOnce() {
    let scheduler = TestScheduler()
    let outer = filledChannel(Array(0..<6))
    let inners = (0..<6).map { _ in CoChannel<Int>() }
    let made = Recorder<Int>()
    let flat = outer.receiver.flatMapMerge(maxConcurrent: 2) { index -> CoChannel<Int>.Receiver in
      made.append(index)
      return inners[index].receiver
    }
    let timeline = record(flat, on: scheduler)
    scheduler.run()
    XCTAssertEqual(made.elements, [0, 1], "two at once")
    inners[1].offer(10)
    inners[1].close()
    scheduler.run()
    XCTAssertEqual(made.elements, [0, 1, 2], "the closed one made room for the next")
    for index in [0, 2] {
      inners[index].offer(index * 10)
      inners[index].close()
    }
    scheduler.run()
    XCTAssertEqual(made.elements, [0, 1, 2, 3, 4])
    for index in 3..<6 {
      inners[index].offer(index * 10)
      inners[index].close()
      scheduler.run()
    }
    XCTAssertEqual(Set(timeline.values), Set([0, 10, 20, 30, 40, 50]))
    XCTAssertEqual(timeline.end?.error, "closed")
  }

  func testFlatMapMergeKeepsEachInnersOrder() {
    let flat = filledChannel([1, 2, 3]).receiver.flatMapMerge(maxConcurrent: 3) { n in
      filledChannel((0..<4).map { n * 100 + $0 }).receiver
    }
    let drained = drain(flat)
    XCTAssertEqual(drained.elements.count, 12)
    for n in 1...3 {
      XCTAssertEqual(drained.elements.filter { $0 / 100 == n }, (0..<4).map { n * 100 + $0 })
    }
  }

  func testFlatMapMergeFailsWhenAnInnerIsCancelledAndCancelsTheRest() {
    let scheduler = TestScheduler()
    let outer = filledChannel([0, 1], closed: false)
    let inners = [CoChannel<Int>(), CoChannel<Int>()]
    let flat = outer.receiver.flatMapMerge(maxConcurrent: 4) { inners[$0].receiver }
    let timeline = record(flat, on: scheduler)
    scheduler.run()
    inners[0].cancel()
    scheduler.run()
    XCTAssertEqual(timeline.end?.error, "canceled")
    XCTAssertTrue(inners[1].isCanceled)
    XCTAssertTrue(outer.isCanceled)
  }

  func testCancellingFlatMapMergeCancelsTheOuterAndTheInnersBeingRead() {
    let scheduler = TestScheduler()
    let outer = filledChannel([0], closed: false)
    let inner = CoChannel<Int>()
    let flat = outer.receiver.flatMapMerge { _ in inner.receiver }
    let timeline = record(flat, on: scheduler)
    scheduler.run()
    flat.cancel()
    scheduler.run()
    XCTAssertEqual(timeline.end?.error, "canceled")
    XCTAssertTrue(outer.isCanceled)
    XCTAssertTrue(inner.isCanceled)
  }

  func testFlatMapLatestSwitchesToTheLatestInnerAndCancelsThePreviousOne() {
    let scheduler = TestScheduler()
    let queries = CoChannel<String>()
    let results = [CoChannel<String>(), CoChannel<String>()]
    let latest = queries.receiver.flatMapLatest { query in
      results[query == "swi" ? 0 : 1].receiver
    }
    let timeline = record(latest, on: scheduler)
    queries.offer("swi")
    scheduler.run()
    results[0].offer("swift-nio")
    scheduler.run()
    queries.offer("swift async")
    scheduler.run()
    XCTAssertTrue(results[0].isCanceled, "the previous search is cancelled")
    XCTAssertFalse(results[0].offer("late"))
    results[1].offer("swift-async-algorithms")
    results[1].close()
    scheduler.run()
    XCTAssertNil(timeline.end, "the outer stream is still open")
    queries.close()
    scheduler.run()
    XCTAssertEqual(timeline.values, ["swift-nio", "swift-async-algorithms"])
    XCTAssertEqual(timeline.end?.error, "closed")
  }

  func testFlatMapLatestDropsAnInnerElementWaitingWhenANewOuterElementArrives() {
    let scheduler = TestScheduler()
    let outer = CoChannel<Int>()
    let first = filledChannel([1, 2, 3], closed: false)
    let second = filledChannel([10], closed: false)
    let latest = outer.receiver.flatMapLatest { $0 == 0 ? first.receiver : second.receiver }
    startStage(latest, on: scheduler)
    outer.offer(0)
    scheduler.run()  // the stage holds 1, waiting for a consumer
    outer.offer(1)
    scheduler.run()  // … and drops it for the new inner receiver
    outer.close()
    second.close()
    let drained = drain(latest, on: scheduler)
    XCTAssertEqual(drained.elements, [10])
    XCTAssertTrue(first.isCanceled)
  }

  func testFlatMapLatestEndsWhenTheOuterAndTheLastInnerHaveClosed() {
    let drained = drain(
      filledChannel([1, 2]).receiver.flatMapLatest { filledChannel([$0, $0]).receiver })
    XCTAssertTrue(drained.endedClosed)
    XCTAssertEqual(drained.elements.suffix(2), [2, 2])
  }
}
