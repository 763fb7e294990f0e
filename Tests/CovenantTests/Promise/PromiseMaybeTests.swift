import Covenant
import Foundation
import XCTest

private enum Plain: Error { case one, two }
private struct Opaque: Error { let detail: Int }

final class PromiseMaybeTests: XCTestCase {
  func testInitializersAndAccessors() {
    let value = Maybe<Int>(1)
    XCTAssertEqual(value.value, 1)
    XCTAssertNil(value.error)
    let error = Maybe<Int>(TestError(2))
    XCTAssertNil(error.value)
    XCTAssertEqual(error.error as? TestError, TestError(2))
    if case .value(let v) = value { XCTAssertEqual(v, 1) } else { XCTFail() }
    if case .error(let e) = error {
      XCTAssertEqual(e as? TestError, TestError(2))
    } else {
      XCTFail()
    }
  }

  func testValuesCompareByEquality() {
    XCTAssertEqual(Maybe(1), Maybe(1))
    XCTAssertNotEqual(Maybe(1), Maybe(2))
    XCTAssertNotEqual(Maybe(1), Maybe<Int>(TestError()))
    XCTAssertEqual(Maybe<Int?>.value(nil), Maybe<Int?>.value(nil))
    XCTAssertEqual([Maybe(1), .error(TestError())], [.value(1), .error(TestError())])
  }

  func testEquatableErrorsCompareByTypeAndEquality() {
    XCTAssertEqual(Maybe<Int>(TestError(1)), Maybe<Int>(TestError(1)))
    XCTAssertNotEqual(Maybe<Int>(TestError(1)), Maybe<Int>(TestError(2)))
    XCTAssertEqual(Maybe<Int>(Plain.one), Maybe<Int>(Plain.one))
    XCTAssertNotEqual(Maybe<Int>(Plain.one), Maybe<Int>(Plain.two))
    XCTAssertNotEqual(Maybe<Int>(PromiseError.timedOut), Maybe<Int>(TestError(1)))
  }

  func testNSErrorsCompareByDomainAndCode() {
    XCTAssertEqual(
      Maybe<Int>(NSError(domain: "d", code: 1)),
      Maybe<Int>(NSError(domain: "d", code: 1, userInfo: ["extra": 1])))
    XCTAssertNotEqual(
      Maybe<Int>(NSError(domain: "d", code: 1)), Maybe<Int>(NSError(domain: "d", code: 2)))
    XCTAssertNotEqual(
      Maybe<Int>(NSError(domain: "d", code: 1)), Maybe<Int>(NSError(domain: "e", code: 1)))
  }

  func testOtherErrorsCompareByTypeThenDomainAndCode() {
    XCTAssertEqual(Maybe<Int>(Opaque(detail: 1)), Maybe<Int>(Opaque(detail: 1)))
    XCTAssertNotEqual(Maybe<Int>(Opaque(detail: 1)), Maybe<Int>(TestError(1)))
  }
}
