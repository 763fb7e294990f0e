import Covenant
import Dispatch
import XCTest

final class PromiseAllTests: PromiseTestCase {
  func testFulfilledPathKeepsOrder() throws {
    let sources = (0..<5).map { _ in Promise<Int>() }
    let combined = all(on: queue.queue, sources)
    for (index, source) in sources.enumerated().reversed() { source.fulfill(index * 10) }
    XCTAssertEqual(try wait(for: combined, timeout: 2), [0, 10, 20, 30, 40])
  }

  func testRejectedPathFailsFast() {
    let slow = Promise<Int>()
    let failing = Promise<Int>()
    let combined = all(on: queue.queue, slow, failing)
    failing.reject(TestError(1))
    XCTAssertThrowsError(try wait(for: combined, timeout: 2)) {
      XCTAssertEqual($0 as? TestError, TestError(1))
    }
    XCTAssertTrue(slow.isPending, "did not fail fast")
    slow.fulfill(1)
    settle()
    XCTAssertEqual(combined.error as? TestError, TestError(1), "first resolution wins")
  }

  func testAlreadyResolvedSources() throws {
    let combined = all(on: .main, Promise(1), Promise(2))
    XCTAssertTrue(combined.isPending, "resolved inline")
    let (first, second) = try wait(for: combined, timeout: 2)
    XCTAssertEqual([first, second], [1, 2])
    let rejected = all(on: queue.queue, Promise(1), Promise<Int>(TestError(2)))
    settle()
    XCTAssertEqual(rejected.error as? TestError, TestError(2))
  }

  func testThrowingSourceBlockRejects() {
    let throwing = Promise(1).then(on: queue.queue) { _ -> Int in throw TestError(3) }
    let combined = all(on: queue.queue, [Promise(1), throwing])
    settle()
    XCTAssertEqual(combined.error as? TestError, TestError(3))
  }

  func testEmptyInputFulfilsWithEmptyArray() throws {
    XCTAssertEqual(try wait(for: all(on: queue.queue, [Promise<Int>]()), timeout: 2), [])
    let variadic: Promise<[Int]> = all(on: queue.queue)
    XCTAssertEqual(try wait(for: variadic, timeout: 2), [])
  }

  func testSequenceForm() throws {
    let combined = all(on: queue.queue, (1...3).lazy.map { Promise($0) })
    XCTAssertEqual(try wait(for: combined, timeout: 2), [1, 2, 3])
  }

  // Issue 10: as in google/promises, two to four promises give a tuple even when they have
  // the same type; the array form takes more, an array, or a stated array type.
  func testSameTypedPromisesGiveATupleUpToFour() throws {
    let pair = all(on: queue.queue, Promise(1), Promise(2))
    let _: Promise<(Int, Int)> = pair
    XCTAssertEqual(
      try wait(for: pair.then(on: queue.queue) { pair in pair.0 + pair.1 }, timeout: 2), 3)
    let triple = all(on: queue.queue, Promise(1), Promise(2), Promise(3))
    XCTAssertEqual(try wait(for: triple, timeout: 2).2, 3)
    let quartet = all(on: queue.queue, Promise(1), Promise(2), Promise(3), Promise(4))
    XCTAssertEqual(try wait(for: quartet, timeout: 2).3, 4)
    let many = all(on: queue.queue, Promise(1), Promise(2), Promise(3), Promise(4), Promise(5))
    XCTAssertEqual(try wait(for: many, timeout: 2), [1, 2, 3, 4, 5])
    let stated: Promise<[Int]> = all(on: queue.queue, Promise(1), Promise(2))
    XCTAssertEqual(try wait(for: stated, timeout: 2), [1, 2])
    let single = all(on: queue.queue, Promise(1))
    XCTAssertEqual(try wait(for: single, timeout: 2), [1])
  }

  func testTupleForms() throws {
    let two = try wait(for: all(on: queue.queue, Promise(1), Promise([true])), timeout: 2)
    XCTAssertEqual(two.0, 1)
    XCTAssertEqual(two.1, [true])
    let three = try wait(
      for: all(on: queue.queue, Promise(1), Promise(2.5), Promise([3])), timeout: 2)
    XCTAssertEqual(three.0, 1)
    XCTAssertEqual(three.1, 2.5)
    XCTAssertEqual(three.2, [3])
    let four = try wait(
      for: all(on: queue.queue, Promise(1), Promise(2.5), Promise([3]), Promise<Int?>(nil)),
      timeout: 2)
    XCTAssertEqual(four.0, 1)
    XCTAssertEqual(four.3, nil)
  }

  func testSameTypedTupleByContextOrDestructuring() throws {
    let pair: Promise<(Int, Int)> = all(on: queue.queue, Promise(1), Promise(2))
    XCTAssertEqual(try wait(for: pair, timeout: 2).1, 2)
    let sum = all(on: queue.queue, Promise(1), Promise(2)).then(on: queue.queue) { a, b in a + b }
    XCTAssertEqual(try wait(for: sum, timeout: 2), 3)
  }

  func testTupleFormFailsFast() {
    let slow = Promise<Int>()
    let combined = all(on: queue.queue, slow, Promise<Double>(TestError(4)))
    XCTAssertThrowsError(try wait(for: combined, timeout: 2))
    XCTAssertEqual(combined.error as? TestError, TestError(4))
    slow.fulfill(0)
  }

  func testCombinesOnGivenQueue() throws {
    let gate = DispatchQueue(label: "covenant.test.gate")
    gate.suspend()
    let combined = all(on: gate, Promise(1))
    runBriefly()
    XCTAssertTrue(combined.isPending, "did not go through the given queue")
    gate.resume()
    XCTAssertEqual(try wait(for: combined, timeout: 2), [1])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { all(on: queue.queue, $0, Promise(2)) }
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) {
      all(on: queue.queue, $0, Promise("two" as Substring))
    }
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) { all(on: queue.queue, [$0]) }
  }

  func testLargeInput() throws {
    let count = TestScale.stress(10_000, sanitizerDivisor: 10)
    let sources = (0..<count).map { Promise<Int>(on: .global()) { [i = $0] in i } }
    let values = try wait(for: all(on: .global(), sources), timeout: 10)
    XCTAssertEqual(values, Array(0..<count))
  }
}
