import Covenant
import XCTest

private struct Failure: Error {}

/// `Error.isCancellation`: one test for every way Covenant (and Swift) says "cancelled", and
/// nothing else.
final class IsCancellationTests: XCTestCase {
  func testEveryCancellationErrorIsOne() {
    let cancellations: [any Error] = [
      CoroutineError.canceled, CoFutureError.canceled, CoChannelError.canceled,
      CancellationError(),
    ]
    for error in cancellations {
      XCTAssertTrue(error.isCancellation, "\(error)")
    }
  }

  func testTimeoutsClosedChannelsAndFailuresAreNot() {
    let others: [any Error] = [
      CoFutureError.timeout, CoChannelError.closed, CoroutineError.calledOutsideCoroutine,
      PromiseError.timedOut, Failure(),
    ]
    for error in others {
      XCTAssertFalse(error.isCancellation, "\(error)")
    }
  }

  func testTheErrorsCovenantThrowsOnCancellation() throws {
    let future = CoPromise<Int>()
    future.cancel()
    XCTAssertThrowsError(try future.result?.get()) { XCTAssertTrue($0.isCancellation) }

    let channel = CoChannel<Int>()
    channel.cancel()
    XCTAssertThrowsError(try channel.awaitReceive()) { XCTAssertTrue($0.isCancellation) }

    let scope = CoScope()
    let thrown = Box<(any Error)?>(nil)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine(in: scope) {
      defer { done.signal() }
      scope.cancel()
      do { try Coroutine.yield() } catch { thrown.value = error }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(thrown.value?.isCancellation, true)
  }

  func testACancellationErrorThrownOutOfACoroutineIsNotReported() throws {
    let reported = Box<[String]>([])
    let scope = CoScope()
    scope.uncaughtErrorHandler = { reported.value.append("\($0.error)") }
    DispatchQueue.global().startCoroutine(in: scope) { throw CancellationError() }
    DispatchQueue.global().startCoroutine(in: scope) { throw Failure() }
    try scope.join()  // both have ended, their errors handed on
    XCTAssertEqual(reported.value, ["Failure()"])
  }
}
