import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

final class CoFuturePromiseTests: XCTestCase {
  override func setUp() {
    super.setUp()
    DispatchQueue.promises = .global()
  }

  override func tearDown() {
    DispatchQueue.promises = .main
    super.tearDown()
  }

  func testFutureFromPendingPromiseFollowsItSynchronously() {
    let promise = Promise<Int>()
    let future = CoFuture(promise)
    XCTAssertNil(future.result)
    promise.fulfill(3)
    XCTAssertEqual(try future.result?.get(), 3, "no queue hop")

    let rejected = Promise<Int>()
    let failing = CoFuture(rejected)
    rejected.reject(TestError(1))
    XCTAssertThrowsError(try failing.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(1))
    }
  }

  func testFutureFromResolvedPromise() {
    XCTAssertEqual(try CoFuture(Promise(4)).result?.get(), 4)
    XCTAssertThrowsError(try CoFuture(Promise<Int>(TestError(2))).result?.get())
  }

  func testCancellingFutureRejectsItsPromise() {
    let promise = Promise<Int>()
    let future = CoFuture(promise)
    future.cancel()
    XCTAssertTrue(future.isCanceled)
    XCTAssertTrue(isFutureError(promise.error, .canceled))
  }

  func testPromiseFromFuture() throws {
    let coPromise = CoPromise<String>()
    let promise = Promise(coPromise)
    XCTAssertTrue(promise.isPending)
    coPromise.success("s")
    XCTAssertEqual(promise.value, "s", "no queue hop")

    let failed = CoPromise<String>()
    let rejected = failed.promise
    failed.fail(TestError(3))
    XCTAssertEqual(rejected.error as? TestError, TestError(3))

    XCTAssertEqual(CoFuture(result: .success(1)).promise.value, 1)
    XCTAssertEqual(Promise<Int>(CoFuture(result: .success(2))).value, 2)

    let canceled = CoPromise<Int>()
    let fromCanceled = canceled.promise
    canceled.cancel()
    XCTAssertTrue(isFutureError(fromCanceled.error, .canceled))
  }

  func testPromiseChainsOnAFutureAndRoundTrip() throws {
    let coPromise = CoPromise<Int>()
    let doubled = coPromise.promise.then { $0 * 2 }
    let back = CoFuture(doubled)
    DispatchQueue.global().async { coPromise.success(21) }
    XCTAssertEqual(try wait(for: doubled), 42)
    coRun { XCTAssertEqual(try back.await(), 42) }
  }

  func testPendingFutureDeallocatedRejectsDerivedPromise() {
    var promise: Promise<Int>?
    do {
      let coPromise = CoPromise<Int>()
      promise = coPromise.promise
    }
    XCTAssertTrue(isFutureError(promise?.error, .canceled))
  }

  func testPromiseAwaitAndFutureAwaitAgree() {
    let promise = Promise<Int>()
    let future = CoFuture(promise)
    coRun(resolvingWhileSuspended: { promise.fulfill(6) }) {
      XCTAssertEqual(try future.await(), 6)
      XCTAssertEqual(try promise.await(), 6)
    }
  }
}
