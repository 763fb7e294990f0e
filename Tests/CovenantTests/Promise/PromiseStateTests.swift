import Covenant
import XCTest

final class PromiseStateTests: XCTestCase {
  func testFirstResolutionWins() {
    let promise = Promise<Int>()
    XCTAssertTrue(promise.isPending)
    promise.fulfill(1)
    promise.fulfill(2)
    promise.reject(PromiseError.timedOut)
    XCTAssertEqual(promise.value, 1)
    XCTAssertTrue(promise.isFulfilled)
    XCTAssertFalse(promise.isRejected)
  }
}
