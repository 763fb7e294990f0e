import Covenant
import XCTest

final class PromiseValidateTests: PromiseTestCase {
  func testPassingPredicateKeepsValue() throws {
    let source = Promise<Int>()
    let derived = source.validate(on: queue.queue) { $0 > 0 }
    source.fulfill(3)
    XCTAssertEqual(try wait(for: derived, timeout: 2), 3)
  }

  func testFailingPredicateRejectsWithValidationFailure() {
    let derived = Promise(-1).validate(on: queue.queue) { $0 > 0 }
    settle()
    XCTAssertEqual(derived.error as? PromiseError, .validationFailure)
  }

  func testRejectedPathSkipsPredicate() {
    let ran = Recorder<Bool>()
    let derived = Promise<Int>(TestError(1)).validate(on: queue.queue) { _ in
      ran.append(true)
      return true
    }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(1))
    XCTAssertEqual(ran.count, 0)
  }

  func testAlreadyResolvedSource() {
    let derived = Promise(1).validate(on: .main) { _ in true }
    XCTAssertTrue(derived.isPending, "ran inline")
    settle()
    XCTAssertEqual(derived.value, 1)
  }

  func testThrowingUpstreamBlockIsPassedOn() {
    let derived = Promise(1)
      .then(on: queue.queue) { _ -> Int in throw TestError(2) }
      .validate(on: queue.queue) { _ in true }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(2))
  }

  func testBlockRunsOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise(1).validate(on: q.queue) { _ in
      onQueue.append(q.isCurrent)
      return true
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) {
      $0.validate(on: queue.queue) { _ in false }
    }
  }
}
