import Covenant
import Dispatch
import XCTest

final class PromiseAnyTests: PromiseTestCase {
  func testMixedOutcomesFulfilInOrder() throws {
    let sources = (0..<4).map { _ in Promise<Int>() }
    let combined = any(on: queue.queue, sources)
    sources[3].fulfill(3)
    sources[1].reject(TestError(1))
    sources[0].fulfill(0)
    runBriefly()
    XCTAssertTrue(combined.isPending, "did not wait for every promise to settle")
    sources[2].reject(TestError(2))
    let outcomes = try wait(for: combined, timeout: 2)
    XCTAssertEqual(
      outcomes, [.value(0), .error(TestError(1)), .error(TestError(2)), .value(3)])
  }

  func testAllRejectedRejectsWithLastErrorToSettle() {
    let sources = (0..<3).map { _ in Promise<Int>() }
    let combined = any(on: queue.queue, sources)
    sources[0].reject(TestError(0))
    sources[2].reject(TestError(2))
    sources[1].reject(TestError(1))
    settle()
    XCTAssertEqual(combined.error as? TestError, TestError(1))
  }

  func testAlreadyResolvedSources() throws {
    let combined = any(on: .main, Promise(1), Promise<Int>(TestError(2)))
    XCTAssertTrue(combined.isPending, "resolved inline")
    let (first, second) = try wait(for: combined, timeout: 2)
    XCTAssertEqual([first, second], [.value(1), .error(TestError(2))])
  }

  func testThrowingSourceBlockIsAnErrorOutcome() throws {
    let throwing = Promise(1).then(on: queue.queue) { _ -> Int in throw TestError(3) }
    let outcomes = try wait(for: any(on: queue.queue, [throwing, Promise(4)]), timeout: 2)
    XCTAssertEqual(outcomes, [.error(TestError(3)), .value(4)])
  }

  func testEmptyInputFulfilsWithEmptyArray() throws {
    XCTAssertEqual(try wait(for: any(on: queue.queue, [Promise<Int>]()), timeout: 2), [])
    let variadic: Promise<[Maybe<Int>]> = any(on: queue.queue)
    XCTAssertEqual(try wait(for: variadic, timeout: 2), [])
  }

  // Issue 10: as in google/promises, two or three promises give a tuple even when they have
  // the same type; the array form takes more, an array, or a stated array type.
  func testSameTypedPromisesGiveATupleUpToThree() throws {
    let pair = any(on: queue.queue, Promise(1), Promise(2))
    let _: Promise<(Maybe<Int>, Maybe<Int>)> = pair
    let (first, second) = try wait(for: pair, timeout: 2)
    XCTAssertEqual([first, second], [.value(1), .value(2)])
    let triple = any(on: queue.queue, Promise(1), Promise(2), Promise<Int>(TestError(3)))
    XCTAssertEqual(try wait(for: triple, timeout: 2).2, .error(TestError(3)))
    let four = any(on: queue.queue, Promise(1), Promise(2), Promise(3), Promise(4))
    XCTAssertEqual(try wait(for: four, timeout: 2).count, 4)
    let stated: Promise<[Maybe<Int>]> = any(on: queue.queue, Promise(1), Promise(2))
    XCTAssertEqual(try wait(for: stated, timeout: 2), [.value(1), .value(2)])
  }

  func testTupleForms() throws {
    let two = try wait(
      for: any(on: queue.queue, Promise<Int>(1), Promise<Double>(TestError(2))), timeout: 2)
    XCTAssertEqual(two.0, .value(1))
    XCTAssertEqual(two.1, .error(TestError(2)))
    let three = try wait(
      for: any(on: queue.queue, Promise<Int>(TestError(1)), Promise(2.5), Promise([3])),
      timeout: 2)
    XCTAssertEqual(three.0.error as? TestError, TestError(1))
    XCTAssertEqual(three.1.value, 2.5)
    XCTAssertEqual(three.2.value, [3])
  }

  func testTupleFormAllRejected() {
    let combined = any(on: queue.queue, Promise<Int>(TestError(1)), Promise<Double>(TestError(2)))
    settle()
    XCTAssertTrue(combined.isRejected)
  }

  func testCombinesOnGivenQueue() throws {
    let gate = DispatchQueue(label: "covenant.test.gate")
    gate.suspend()
    let combined = any(on: gate, Promise(1))
    runBriefly()
    XCTAssertTrue(combined.isPending, "did not go through the given queue")
    gate.resume()
    XCTAssertEqual(try wait(for: combined, timeout: 2), [.value(1)])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) {
      any(on: queue.queue, $0, Promise(2))
    }
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) {
      any(on: queue.queue, $0, Promise(2.0))
    }
  }
}
