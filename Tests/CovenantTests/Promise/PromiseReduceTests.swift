import Covenant
import XCTest

final class PromiseReduceTests: PromiseTestCase {
  func testFoldsVariadicItemsInOrder() throws {
    let folded = Promise<[Int]>([]).reduce(
      on: queue.queue, 1, 2, 3,
      combine: { list, number in
        Promise(list + [number])
      })
    XCTAssertEqual(try wait(for: folded, timeout: 2), [1, 2, 3])
  }

  func testFoldsSequenceInOrder() throws {
    let folded = Promise(0).reduce(on: queue.queue, [1, 2, 3, 4]) { total, next in
      Promise(total * 10 + next)
    }
    XCTAssertEqual(try wait(for: folded, timeout: 2), 1234)
    let lazily = Promise<[Int]>([]).reduce(on: queue.queue, (1...3).lazy.map { $0 * 2 }) {
      Promise($0 + [$1])
    }
    XCTAssertEqual(try wait(for: lazily, timeout: 2), [2, 4, 6])
  }

  func testTrailingClosureWithVariadicItems() throws {
    let folded = Promise(0).reduce(on: queue.queue, 1, 2, 3) { Promise($0 + $1) }
    XCTAssertEqual(try wait(for: folded, timeout: 2), 6)
  }

  func testStepsRunOneAfterTheOther() throws {
    let steps = Recorder<Int>()
    let gate = Promise<Void>()
    let q = queue
    let folded = Promise(0).reduce(on: queue.queue, [1, 2]) { total, next in
      steps.append(next)
      return next == 1 ? gate.then(on: q.queue) { total + next } : Promise(total + next)
    }
    runBriefly()
    XCTAssertEqual(steps.elements, [1], "the second step started before the first finished")
    gate.fulfill(())
    XCTAssertEqual(try wait(for: folded, timeout: 2), 3)
    XCTAssertEqual(steps.elements, [1, 2])
  }

  func testEmptyItemsReturnSelf() {
    let start = Promise(5)
    XCTAssertTrue(start.reduce(on: queue.queue, [Int]()) { Promise($0 + $1) } === start)
  }

  func testRejectedSourceSkipsReducer() {
    let ran = Recorder<Int>()
    let folded = Promise<Int>(TestError(1)).reduce(on: queue.queue, [1, 2]) { total, next in
      ran.append(next)
      return Promise(total + next)
    }
    settle()
    XCTAssertEqual(folded.error as? TestError, TestError(1))
    XCTAssertEqual(ran.count, 0)
  }

  func testRejectedStepStopsTheFold() {
    let ran = Recorder<Int>()
    let folded = Promise(0).reduce(on: queue.queue, [1, 2, 3]) { total, next in
      ran.append(next)
      return next == 2 ? Promise<Int>(TestError(2)) : Promise(total + next)
    }
    settle()
    XCTAssertEqual(folded.error as? TestError, TestError(2))
    XCTAssertEqual(ran.elements, [1, 2])
  }

  func testThrowingReducerRejects() {
    let folded = Promise(0).reduce(on: queue.queue, [1, 2]) { _, _ -> Promise<Int> in
      throw TestError(3)
    }
    settle()
    XCTAssertEqual(folded.error as? TestError, TestError(3))
  }

  func testAlreadyResolvedSourceRunsAsynchronously() throws {
    let ran = Recorder<Int>()
    let folded = Promise(0).reduce(on: .main, [1]) { total, next in
      ran.append(next)
      return Promise(total + next)
    }
    XCTAssertEqual(ran.count, 0, "ran inline")
    XCTAssertEqual(try wait(for: folded, timeout: 2), 1)
  }

  func testReducerRunsOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise(0).reduce(on: q.queue, [1, 2, 3]) { total, next in
      onQueue.append(q.isCurrent)
      return Promise(total + next)
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true, true, true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) {
      $0.reduce(on: queue.queue, [1, 2]) { Promise($0 + $1) }
    }
  }
}
