import Covenant
import XCTest

final class PromiseAlwaysTests: PromiseTestCase {
  func testFulfilledPathRunsTheBlockAndPassesTheValue() throws {
    let ran = Recorder<Bool>()
    let source = Promise<Int>()
    let derived = source.always(on: queue.queue) { ran.append(true) }
    source.fulfill(3)
    XCTAssertEqual(try wait(for: derived, timeout: 2), 3)
    XCTAssertEqual(ran.count, 1)
  }

  func testRejectedPathRunsTheBlockAndPassesTheError() {
    let ran = Recorder<Bool>()
    let source = Promise<Int>()
    let derived = source.always(on: queue.queue) { ran.append(true) }
    source.reject(TestError(1))
    settle()
    XCTAssertEqual(ran.count, 1)
    XCTAssertEqual(derived.error as? TestError, TestError(1))
  }

  func testAlreadyResolvedSource() {
    let ran = Recorder<Bool>()
    Promise(1).always(on: queue.queue) { ran.append(true) }
    Promise<Int>(TestError()).always(on: queue.queue) { ran.append(true) }
    settle()
    XCTAssertEqual(ran.count, 2)
  }

  func testThrowingUpstreamBlockStillRunsAlways() {
    let ran = Recorder<Bool>()
    let derived = Promise(1)
      .then(on: queue.queue) { _ -> Int in throw TestError(2) }
      .always(on: queue.queue) { ran.append(true) }
    settle()
    XCTAssertEqual(ran.count, 1)
    XCTAssertEqual(derived.error as? TestError, TestError(2))
  }

  func testBlockRunsOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise(1).always(on: q.queue) { onQueue.append(q.isCurrent) }
    settle()
    XCTAssertEqual(onQueue.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { $0.always(on: queue.queue) {} }
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) { $0.always(on: queue.queue) {} }
  }
}
