import Covenant
import CovenantTesting
import XCTest

/// `CoChannel.merge`, `zip` and `combineLatest`: how they combine, end and fail (as
/// swift-async-algorithms' do).
final class CombiningTests: XCTestCase {
  func testMergeKeepsEachReceiversOrderAndEndsWhenAllHaveClosed() {
    let scheduler = TestScheduler()
    let a = CoChannel<Int>()
    let b = CoChannel<Int>()
    let merged = CoChannel.merge(a.receiver, b.receiver)
    let timeline = record(merged, on: scheduler)
    produce([(0, 1), (20, 2), (40, 3)], into: a, closeAt: 50, on: scheduler)
    produce([(10, 10), (30, 20)], into: b, closeAt: 100, on: scheduler)
    scheduler.advance(by: .milliseconds(75))
    XCTAssertEqual(timeline.values, [1, 10, 2, 20, 3])
    XCTAssertEqual(timeline.times, [0, 10, 20, 30, 40])
    XCTAssertNil(timeline.end, "b is still open")
    scheduler.advance(by: .milliseconds(100))
    XCTAssertEqual(timeline.end?.error, "closed")
    XCTAssertEqual(timeline.end?.time, 100)
  }

  func testMergeTakesTurnsAmongReceiversWithElementsReady() {
    let merged = CoChannel.merge(
      filledChannel([1, 2, 3]).receiver, filledChannel([10, 20, 30]).receiver,
      filledChannel([100]).receiver)
    let drained = drain(merged)
    XCTAssertEqual(drained.elements, [1, 10, 100, 2, 20, 3, 30])
    XCTAssertTrue(drained.endedClosed)
  }

  func testMergeFailsAtOnceWhenOneReceiverIsCancelledAndCancelsTheOthers() {
    let scheduler = TestScheduler()
    let a = CoChannel<Int>()
    let b = filledChannel([5], closed: false)
    let merged = CoChannel.merge([a.receiver, b.receiver])
    let timeline = record(merged, on: scheduler)
    scheduler.run()
    XCTAssertEqual(timeline.values, [5])
    a.cancel()
    scheduler.run()
    XCTAssertEqual(timeline.end?.error, "canceled")
    XCTAssertTrue(b.isCanceled)
  }

  func testMergeOfNothingIsClosedAtOnce() {
    XCTAssertTrue(drain(CoChannel<Int>.merge([])).endedClosed)
  }

  func testZipPairsElementsInOrderAndEndsWhenEitherCloses() {
    let names = filledChannel(["a", "b", "c"])
    let numbers = filledChannel([1, 2, 3, 4, 5], closed: false)
    let drained = drain(CoChannel.zip(names.receiver, numbers.receiver))
    XCTAssertEqual(drained.elements.map { "\($0.0)\($0.1)" }, ["a1", "b2", "c3"])
    XCTAssertTrue(drained.endedClosed)
    XCTAssertTrue(numbers.isCanceled, "nothing more will be read from the other one")
  }

  func testZipWaitsForBothAndFailsWhenOneIsCancelled() {
    let scheduler = TestScheduler()
    let a = CoChannel<Int>()
    let b = CoChannel<String>()
    let zipped = CoChannel.zip(a.receiver, b.receiver)
    let timeline = record(zipped.map { "\($0.0)\($0.1)" }, on: scheduler)
    produce([(0, 1), (10, 2)], into: a, on: scheduler)
    produce([(30, "x")], into: b, on: scheduler)
    scheduler.advance(by: .milliseconds(50))
    XCTAssertEqual(timeline.values, ["1x"])
    XCTAssertEqual(timeline.times, [30])
    b.cancel()
    scheduler.run()
    XCTAssertEqual(timeline.end?.error, "canceled")
    XCTAssertTrue(a.isCanceled)
  }

  /// swift-async-algorithms' example: the latest of each, once both have produced one.
  func testCombineLatestPairsTheLatestOfEachOnceBothHaveProduced() {
    let scheduler = TestScheduler()
    let apple = CoChannel<Double>()
    let nasdaq = CoChannel<Double>()
    let combined = CoChannel.combineLatest(apple.receiver, nasdaq.receiver)
    let timeline = record(combined.map { "\($0.0)/\($0.1)" }, on: scheduler)
    produce([(0, 173.91), (300, 173.0)], into: apple, closeAt: 400, on: scheduler)
    produce([(100, 14236.78), (200, 14218.34)], into: nasdaq, closeAt: 500, on: scheduler)
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(
      timeline.values, ["173.91/14236.78", "173.91/14218.34", "173.0/14218.34"])
    XCTAssertEqual(timeline.times, [100, 200, 300])
    XCTAssertEqual(timeline.end?.error, "closed")
    XCTAssertEqual(timeline.end?.time, 500, "when both have closed")
  }

  func testCombineLatestEndsAtOnceWhenOneClosesWithoutAnElement() {
    let scheduler = TestScheduler()
    let a = filledChannel([Int]())
    let b = filledChannel([1, 2], closed: false)
    let combined = CoChannel.combineLatest(a.receiver, b.receiver)
    let drained = drain(combined, on: scheduler)
    XCTAssertEqual(drained.elements.count, 0)
    XCTAssertTrue(drained.endedClosed)
    XCTAssertTrue(b.isCanceled)
  }

  func testCombineLatestFailsWhenOneIsCancelled() {
    let scheduler = TestScheduler()
    let a = filledChannel([1], closed: false)
    let b = filledChannel([2], closed: false)
    let combined = CoChannel.combineLatest(a.receiver, b.receiver)
    let timeline = record(combined.map { $0.0 + $0.1 }, on: scheduler)
    scheduler.run()
    XCTAssertEqual(timeline.values, [3])
    a.cancel()
    scheduler.run()
    XCTAssertEqual(timeline.end?.error, "canceled")
    XCTAssertTrue(b.isCanceled)
  }
}
