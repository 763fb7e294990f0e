import Covenant
import Foundation
import XCTest

final class PromiseDelayTests: PromiseTestCase {
  func testFulfilmentIsDelayed() throws {
    let source = Promise<Int>()
    let start = Date()
    let delayed = source.delay(on: queue.queue, 0.05)
    source.fulfill(3)
    XCTAssertEqual(try wait(for: delayed, timeout: 2), 3)
    XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.045)
  }

  func testRejectionIsPassedOnAtOnce() {
    let source = Promise<Int>()
    let delayed = source.delay(on: queue.queue, 60)
    let start = Date()
    source.reject(TestError(1))
    settle()
    XCTAssertEqual(delayed.error as? TestError, TestError(1))
    XCTAssertLessThan(Date().timeIntervalSince(start), 1)
  }

  func testAlreadyResolvedSource() throws {
    let delayed = Promise(1).delay(on: queue.queue, 0.01)
    XCTAssertTrue(delayed.isPending)
    XCTAssertEqual(try wait(for: delayed, timeout: 2), 1)
    let rejected = Promise<Int>(TestError(2)).delay(on: queue.queue, 60)
    settle()
    XCTAssertEqual(rejected.error as? TestError, TestError(2))
  }

  func testThrowingUpstreamBlockIsPassedOnAtOnce() {
    let delayed = Promise(1)
      .then(on: queue.queue) { _ -> Int in throw TestError(3) }
      .delay(on: queue.queue, 60)
    settle()
    XCTAssertEqual(delayed.error as? TestError, TestError(3))
  }

  func testNegativeIntervalIsZero() throws {
    XCTAssertEqual(try wait(for: Promise(1).delay(on: queue.queue, -5), timeout: 2), 1)
  }

  func testObserversRunOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise(1).delay(on: q.queue, 0.001).then(on: q.queue) { _ in onQueue.append(q.isCurrent) }
    settle()
    XCTAssertEqual(onQueue.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { $0.delay(on: queue.queue, 0.01) }
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) { $0.delay(on: queue.queue, 60) }
  }
}
