import Covenant
import Foundation
import XCTest

/// Architecture.md, "Exclusivity checking across suspensions": what common code does around Swift's dynamic exclusivity checks when a coroutine
/// suspends and may resume on another thread.
final class CoroutineExclusivityTests: XCTestCase {
  final class Account: @unchecked Sendable {
    var total = 0
  }

  func testCompoundAssignmentWithAwaitOnTheRightIsSafe() {
    // `object.total += try future.await()`: Swift evaluates the right-hand side before the
    // access to `total` begins, so nothing is held across the suspension.
    let account = Account()
    let concurrent = DispatchQueue(label: "x", attributes: .concurrent)
    let done = expectation(description: "done")
    done.expectedFulfillmentCount = 50
    let serial = DispatchQueue(label: "serial-account")
    for _ in 0..<50 {
      concurrent.startCoroutine {
        let value = try Promise<Int>(on: .global()) { 1 }.await()
        try serial.await { account.total += value }
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 10)
    XCTAssertEqual(account.total, 50)
  }

  func testSuspendingInsideAnExclusiveAccessAndResumingOnAnotherThread() {
    // An inout access to a class property held across a suspension. Each coroutine carries
    // its own exclusivity access set (the fiber layer swaps it in and out), so resuming on
    // another thread neither trips the checker nor corrupts the thread's access list.
    assertInoutAccessesHeldAcrossSuspensions(on: DispatchQueue(label: "y", attributes: .concurrent))
  }
}

/// Twenty coroutines on `queue` each hold an inout access to its own `Account.total` across an
/// await that a timer on another thread completes, and must end with the awaited value added.
func assertInoutAccessesHeldAcrossSuspensions(
  on queue: DispatchQueue, file: StaticString = #filePath, line: UInt = #line
) {
  let accounts = (0..<20).map { _ in CoroutineExclusivityTests.Account() }
  @Sendable func addAwaited(_ total: inout Int, _ promise: Promise<Int>) throws {
    total += try promise.await()
  }
  let done = DispatchGroup()
  for account in accounts {
    done.enter()
    queue.startCoroutine {
      defer { done.leave() }
      let promise = Promise<Int>()
      DispatchQueue.global().asyncAfter(deadline: .now() + 0.005) { promise.fulfill(5) }
      try addAwaited(&account.total, promise)
    }
  }
  XCTAssertEqual(done.wait(timeout: .now() + 10), .success, file: file, line: line)
  XCTAssertEqual(
    accounts.map(\.total), Array(repeating: 5, count: accounts.count), file: file, line: line)
}
