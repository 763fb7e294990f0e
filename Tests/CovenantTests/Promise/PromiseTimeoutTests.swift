import Covenant
import Foundation
import XCTest

final class PromiseTimeoutTests: PromiseTestCase {
  func testFulfilledInTimeMirrorsValue() throws {
    let source = Promise<Int>()
    let limited = source.timeout(on: queue.queue, 60)
    source.fulfill(3)
    XCTAssertEqual(try wait(for: limited, timeout: 2), 3)
  }

  func testRejectedInTimeMirrorsError() {
    let source = Promise<Int>()
    let limited = source.timeout(on: queue.queue, 60)
    source.reject(TestError(1))
    settle()  // the 60 s timer must not hold waitForPromises up
    XCTAssertEqual(limited.error as? TestError, TestError(1))
  }

  func testFiresWhenSourceIsTooSlow() {
    let source = Promise<Int>()
    let limited = source.timeout(on: queue.queue, 0.01)
    XCTAssertThrowsError(try wait(for: limited, timeout: 2)) {
      XCTAssertEqual($0 as? PromiseError, .timedOut)
    }
    XCTAssertTrue(source.isPending, "the source is not cancelled")
    source.fulfill(1)
    settle()
    XCTAssertEqual(limited.error as? PromiseError, .timedOut, "first resolution wins")
  }

  func testFiresEvenWhenNobodyHoldsTheSource() {
    let timedOut = Recorder<Bool>()
    Promise<Int>().timeout(on: queue.queue, 0.01).catch(on: queue.queue) {
      timedOut.append($0 as? PromiseError == .timedOut)
    }
    settle()
    XCTAssertEqual(timedOut.elements, [true])
  }

  func testAlreadyResolvedSource() throws {
    XCTAssertEqual(try wait(for: Promise(1).timeout(on: queue.queue, 60), timeout: 2), 1)
  }

  func testThrowingUpstreamBlockIsPassedOn() {
    let limited = Promise(1)
      .then(on: queue.queue) { _ -> Int in throw TestError(3) }
      .timeout(on: queue.queue, 60)
    settle()
    XCTAssertEqual(limited.error as? TestError, TestError(3))
  }

  func testNegativeIntervalIsZero() {
    let limited = Promise<Int>().timeout(on: queue.queue, -1)
    settle()
    XCTAssertEqual(limited.error as? PromiseError, .timedOut)
  }

  func testObserversRunOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise<Int>().timeout(on: q.queue, 0.001).catch(on: q.queue) { _ in
      onQueue.append(q.isCurrent)
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { $0.timeout(on: queue.queue, 60) }
  }

  func testTimedOutPromiseIsReleasedOnceItsSourceIsDone() throws {
    let source = Promise<Int>()
    weak var weakLimited: Promise<Int>?
    do {
      let limited = source.timeout(on: queue.queue, 0.01)
      weakLimited = limited
      XCTAssertThrowsError(try wait(for: limited, timeout: 2))
    }
    source.fulfill(1)
    settle()
    XCTAssertNil(weakLimited)
  }
}
