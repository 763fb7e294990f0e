import Covenant
import CovenantTesting
import XCTest

/// `map`, `compactMap` and `filter`: stages without state, run inside each receive, whichever
/// way the consumer receives.
final class MapFilterTests: XCTestCase {
  private func pipeline(_ source: CoChannel<Int>) -> CoChannel<String>.Receiver {
    source.receiver.map { $0 * 3 }.filter { $0.isMultiple(of: 2) }
      .compactMap { $0 > 20 ? nil : "\($0)" }
  }

  func testAwaitReceiveTransformsInOrderAndEndsWithTheBase() {
    let result = drain(pipeline(filledChannel(Array(1...10))))
    XCTAssertEqual(result.elements, ["6", "12", "18"])
    XCTAssertTrue(result.endedClosed)
  }

  func testPollSkipsRejectedElementsAndReturnsNilWhenNothingPasses() {
    let source = filledChannel([1, 2, 3, 9, 11], closed: false)
    let strings = pipeline(source)
    XCTAssertEqual(strings.poll(), "6")
    XCTAssertNil(strings.poll(), "3, 9 and 11 are dropped: nothing left")
    XCTAssertEqual(source.count, 0)
    source.offer(4)
    XCTAssertEqual(strings.poll(), "12")
  }

  func testWhenReceiveDeliversThePassingElementsAndTheEnd() {
    let source = CoChannel<Int>()
    let strings = pipeline(source)
    let got = Recorder<String>()
    strings.whenReceive { got.append("\($0)") }
    source.offer(1)  // rejected: the callback waits for the next one
    XCTAssertEqual(got.elements, [])
    source.offer(2)
    XCTAssertEqual(got.elements, ["success(\"6\")"])
    strings.whenReceive { got.append("\($0)") }
    source.close()
    XCTAssertEqual(got.elements, ["success(\"6\")", "failure(CovenantCore.CoChannelError.closed)"])
  }

  func testReceiveFutureSkipsRejectedElementsAndGivesUpItsTurnWhenCancelled() throws {
    let source = CoChannel<Int>()
    let strings = pipeline(source)
    let future = strings.receiveFuture()
    source.offer(1)
    XCTAssertNil(future.result)
    source.offer(4)
    XCTAssertEqual(try future.result?.get(), "12")
    let cancelled = strings.receiveFuture()
    cancelled.cancel()
    source.offer(6)
    XCTAssertEqual(strings.poll(), "18", "the cancelled future took nothing")
  }

  /// A future cancelled in the instant its element arrives leaves the element for the next
  /// receive: the two race on two threads, many times; every element is received once.
  func testAFutureCancelledAsItsElementArrivesLosesNothing() {
    let rounds = 2_000
    let source = CoChannel<Int>()
    let doubled = source.receiver.map { $0 * 2 }
    var received: [Int] = []
    for round in 0..<rounds {
      let future = doubled.receiveFuture()
      let sent = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        source.offer(round)
        sent.signal()
      }
      future.cancel()
      sent.wait()
      if case .success(let value)? = future.result { received.append(value) }
      if let value = doubled.poll() { received.append(value) }
    }
    let missing = Set((0..<rounds).map { $0 * 2 }).subtracting(received)
    XCTAssertEqual(missing.sorted(), [], "lost")
    XCTAssertEqual(received.count, rounds, "received twice")
  }

  func testChannelMapIsTheReceiversMap() {
    let source = filledChannel(["a", "bb"])
    XCTAssertEqual(drain(source.map { $0.count }).elements, [1, 2])
  }

  func testCountIsAnUpperBoundAndIsEmptyFollowsIt() {
    let source = filledChannel([1, 2, 3], closed: false)
    let odd = source.receiver.filter { $0 % 2 == 1 }
    XCTAssertEqual(odd.count, 3)
    XCTAssertFalse(odd.isEmpty)
    XCTAssertEqual(odd.bufferType, .unlimited)
    _ = odd.poll()
    _ = odd.poll()
    XCTAssertTrue(odd.isEmpty)
  }

  func testStagesRunOnTheReceivingThreadWithoutACoroutine() {
    let source = filledChannel([1, 2])
    let threads = Recorder<Bool>()
    let marked = source.receiver.map { value -> Int in
      threads.append(Thread.isMainThread)
      return value
    }
    XCTAssertEqual(marked.poll(), 1)
    XCTAssertEqual(threads.elements, [Thread.isMainThread])
  }
}
