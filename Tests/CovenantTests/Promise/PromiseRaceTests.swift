import Covenant
import Dispatch
import XCTest

final class PromiseRaceTests: PromiseTestCase {
  func testFirstFulfilmentWins() throws {
    let first = Promise<Int>()
    let second = Promise<Int>()
    let winner = race(on: queue.queue, first, second)
    second.fulfill(2)
    XCTAssertEqual(try wait(for: winner, timeout: 2), 2)
    first.fulfill(1)
    settle()
    XCTAssertEqual(winner.value, 2)
  }

  func testFirstRejectionWins() {
    let first = Promise<Int>()
    let second = Promise<Int>()
    let winner = race(on: queue.queue, [first, second])
    first.reject(TestError(1))
    XCTAssertThrowsError(try wait(for: winner, timeout: 2))
    second.fulfill(2)
    settle()
    XCTAssertEqual(winner.error as? TestError, TestError(1))
  }

  func testAlreadyResolvedSourceWins() throws {
    let pending = Promise<Int>()
    let winner = race(on: .main, pending, Promise(7))
    XCTAssertTrue(winner.isPending, "resolved inline")
    XCTAssertEqual(try wait(for: winner, timeout: 2), 7)
    pending.fulfill(0)
  }

  func testThrowingSourceBlockCanWin() {
    let pending = Promise<Int>()
    let throwing = Promise(1).then(on: queue.queue) { _ -> Int in throw TestError(3) }
    let winner = race(on: queue.queue, pending, throwing)
    XCTAssertThrowsError(try wait(for: winner, timeout: 2))
    XCTAssertEqual(winner.error as? TestError, TestError(3))
    pending.fulfill(0)
  }

  func testSingleSource() throws {
    XCTAssertEqual(try wait(for: race(on: queue.queue, Promise(1)), timeout: 2), 1)
  }

  func testResolvesOnGivenQueue() throws {
    let gate = DispatchQueue(label: "covenant.test.gate")
    gate.suspend()
    let winner = race(on: gate, Promise(1))
    runBriefly()
    XCTAssertTrue(winner.isPending, "did not go through the given queue")
    gate.resume()
    XCTAssertEqual(try wait(for: winner, timeout: 2), 1)
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { race(on: queue.queue, $0) }
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) { race(on: queue.queue, [$0, $0]) }
  }

  // `race()` with no promise is a precondition failure ("race(_:) needs at least one promise");
  // XCTest cannot observe a trap in-process, so it is not exercised here.
}
