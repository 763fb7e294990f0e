import Covenant
import XCTest

final class PromiseCatchTests: PromiseTestCase {
  func testFulfilledPathSkipsTheBlockAndPassesTheValue() throws {
    let caught = Recorder<String>()
    let source = Promise<Int>()
    let derived = source.catch(on: queue.queue) { caught.append("\($0)") }
    source.fulfill(3)
    XCTAssertEqual(try wait(for: derived, timeout: 2), 3)
    XCTAssertEqual(caught.count, 0)
  }

  func testRejectedPathRunsTheBlockAndPassesTheError() {
    let caught = Recorder<Int>()
    let source = Promise<Int>()
    let derived = source.catch(on: queue.queue) { caught.append(($0 as? TestError)?.id ?? -1) }
    source.reject(TestError(1))
    settle()
    XCTAssertEqual(caught.elements, [1])
    XCTAssertEqual(derived.error as? TestError, TestError(1))
  }

  func testAlreadyResolvedSource() {
    let caught = Recorder<Int>()
    Promise<Int>(TestError(2)).catch(on: .main) { caught.append(($0 as! TestError).id) }
    XCTAssertEqual(caught.count, 0, "ran inline")
    settle()
    XCTAssertEqual(caught.elements, [2])
  }

  func testThrowingUpstreamBlockReachesCatch() {
    let caught = Recorder<Int>()
    Promise(1)
      .then(on: queue.queue) { _ -> Int in throw TestError(3) }
      .then(on: queue.queue) { $0 + 1 }
      .catch(on: queue.queue) { caught.append(($0 as! TestError).id) }
    settle()
    XCTAssertEqual(caught.elements, [3])
  }

  func testBlockRunsOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise<Int>(TestError()).catch(on: q.queue) { _ in onQueue.append(q.isCurrent) }
    settle()
    XCTAssertEqual(onQueue.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) {
      $0.catch(on: queue.queue) { _ in }
    }
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { $0.catch(on: queue.queue) { _ in } }
  }
}
