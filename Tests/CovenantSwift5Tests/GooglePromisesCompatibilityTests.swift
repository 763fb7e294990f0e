import Covenant
import Foundation
import XCTest

// Issue 10: code written for google/promises, in its own test suite's style (Swift 5 mode,
// default queue `.main`, `waitForPromises`, `XCTAssert(promise.isPending)`, module-wide
// `extension String: Error {}`), compiles and behaves as it does there.

extension String: @retroactive Error {}

/// The error google/promises' tests use.
private enum Test {
  enum Error: Int, CustomNSError {
    case code13 = 13
    case code42 = 42
  }
}

private struct StructError: Error, Equatable { var code = 7 }
private final class ClassError: Error {}
private enum Failure: Error { case failed }

final class GooglePromisesCompatibilityTests: XCTestCase {
  override func setUp() {
    super.setUp()
    DispatchQueue.promises = .main
  }

  override func tearDown() {
    XCTAssert(waitForPromises(timeout: 10))
    super.tearDown()
  }

  // MARK: 1. A work block that only throws

  func testWorkBlockThatOnlyThrowsRejects() {
    let int = Promise<Int> { throw Test.Error.code42 }
    let void = Promise<Void> { throw Test.Error.code42 }
    let intOn = Promise<Int>(on: .global()) { throw Test.Error.code13 }
    let voidOn = Promise<Void>(on: .global()) { throw Test.Error.code13 }
    XCTAssert(int.isPending)

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(int.error as? Test.Error, .code42)
    XCTAssertEqual(void.error as? Test.Error, .code42)
    XCTAssertEqual(intOn.error as? Test.Error, .code13)
    XCTAssertEqual(voidOn.error as? Test.Error, .code13)
    XCTAssertNil(int.value)
    XCTAssertNil(void.value)
  }

  func testWorkBlockReturningAPromiseAdoptsItAndValuesFulfil() {
    let inner = Promise<Int>.pending()
    let adopted = Promise { return inner }  // no type stated: adopts, a Promise<Int>
    let adoptedOn = Promise(on: .global()) { inner }
    let typed = Promise<Int> { inner }
    let value = Promise { 42 }
    let voidValue = Promise<Void> {}
    let optional = Promise<Int?> { nil }
    let _: Promise<Int> = adopted  // compile-time check of the inferred type
    let _: Promise<Int> = adoptedOn
    let _: Promise<Int> = value
    inner.fulfill(7)

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(adopted.value, 7)
    XCTAssertEqual(adoptedOn.value, 7)
    XCTAssertEqual(typed.value, 7)
    XCTAssertEqual(value.value, 42)
    XCTAssert(voidValue.isFulfilled)
    XCTAssert(optional.isFulfilled)
  }

  // MARK: 2. `Promise(value)` when `Value` conforms to `Error`

  func testValueOfAnErrorConformingStandardTypeFulfils() {
    let typed = Promise<String>("")
    let untyped = Promise("text")
    let chained = Promise<String>("").then { $0 + "!" }

    XCTAssert(typed.isFulfilled)
    XCTAssertEqual(typed.value, "")
    XCTAssertEqual(untyped.value, "text")
    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(chained.value, "!")
  }

  func testStringsInCombinatorsStayValues() {
    var results: [String] = []
    // `text` is only interpolated: nothing but the argument states the second type.
    all(Promise(1), Promise("two")).then { number, text in results.append("pair \(number) \(text)")
    }
    let raced = race(Promise<String>(), Promise("first"))

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(results, ["pair 1 two"])
    XCTAssertEqual(raced.value, "first")
  }

  func testErrorInitializerStillRejects() {
    let rejected = Promise<Int>(Test.Error.code42)
    let fromExistential = Promise<String>(Test.Error.code13 as Error)
    XCTAssertEqual(rejected.error as? Test.Error, .code42)
    XCTAssertEqual(fromExistential.error as? Test.Error, .code13)
  }

  func testPromiseOfAFutureConverts() {
    let future = CoPromise<Int>()
    let converted = Promise(future)
    let _: Promise<Int> = converted  // the conversion, not a Promise<CoPromise<Int>>
    let ready = Promise(CoFuture(value: 3))
    XCTAssertEqual(ready.value, 3)
    XCTAssert(converted.isPending)
    future.success(5)
    XCTAssertEqual(converted.value, 5)
  }

  // MARK: 3. A returned error rejects

  func testThenReturningAnErrorRejects() {
    let enumError = Promise(42).then { _ in Test.Error.code42 }
    let plainEnum = Promise(42).then { _ in Failure.failed }
    let structError = Promise(42).then { _ in StructError() }
    let classError = Promise(42).then { _ in ClassError() }
    let nsError = Promise(42).then { _ in NSError(domain: "test", code: 42) }
    let existential = Promise(42).then { _ -> Error in "returned as Error" }
    let inAny = Promise(42).then { _ -> Any in StructError(code: 9) }

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(enumError.error as? Test.Error, .code42)
    XCTAssertTrue(plainEnum.error is Failure)
    XCTAssertEqual(structError.error as? StructError, StructError())
    XCTAssertTrue(classError.error is ClassError)
    XCTAssertEqual((nsError.error as NSError?)?.code, 42)
    XCTAssertEqual(existential.error as? String, "returned as Error")
    XCTAssertEqual(inAny.error as? StructError, StructError(code: 9))
    XCTAssertNil(enumError.value)
  }

  func testThenReturningAStandardValueWithRetroactiveErrorConformanceFulfils() {
    let string = Promise(42).then { _ in "still a value" }
    let stringInAny = Promise(42).then { _ -> Any in "still a value" }

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(string.value, "still a value")
    XCTAssertEqual(stringInAny.value as? String, "still a value")
  }

  func testPromiseOfAnErrorValueWithoutContextRejects() {
    let rejected = Promise(Test.Error.code42)
    let structRejected = Promise(StructError(code: 3))
    XCTAssert(rejected.isRejected)
    XCTAssertEqual(rejected.error as? Test.Error, .code42)
    XCTAssertEqual(structRejected.error as? StructError, StructError(code: 3))
  }

  // MARK: 4. `value` of a promise of an optional fulfilled with nil

  func testOptionalFulfilledWithNilHasNilValue() {
    let promise = Promise<Int?> { fulfill, _ in fulfill(nil) }
    let ready = Promise<Int?>(nil)
    let some = Promise<Int?>(5)

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertNil(promise.value as Any?)  // nil, not .some(nil)
    XCTAssert(promise.isFulfilled)
    XCTAssertNil(promise.error)
    XCTAssertNil(ready.value as Any?)
    XCTAssert(ready.isFulfilled)
    XCTAssertEqual(some.value, 5)
  }

  // MARK: 5. `all` / `any` of same-typed promises are tuples

  func testAllOfTwoSameTypedPromisesIsATuple() throws {
    let both = all(Promise(1), Promise(2))
    var first: Int?
    both.then { pair in first = pair.0 }
    let summed = both.then { pair in pair.0 + pair.1 }

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(first, 1)
    XCTAssertEqual(summed.value, 3)
    XCTAssertEqual(both.value?.1, 2)

    // awaitPromise blocks this thread: combine on another queue.
    let elsewhere = all(on: .global(), Promise(on: .global()) { 3 }, Promise(on: .global()) { 4 })
    XCTAssertEqual(try awaitPromise(elsewhere).0, 3)
  }

  func testAllOfThreeAndFourSameTypedPromisesAreTuples() {
    let three = all(Promise(1), Promise(2), Promise(3)).then { triple in triple.2 }
    let four = all(Promise(1), Promise(2), Promise(3), Promise(4)).then { quad in quad.3 }
    let five = all(Promise(1), Promise(2), Promise(3), Promise(4), Promise(5))
    let array = all([Promise(1), Promise(2)])
    let _: Promise<[Int]> = five  // more than four: the array form
    let _: Promise<[Int]> = array
    let statedArray: Promise<[Int]> = all(Promise(1), Promise(2))

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(three.value, 3)
    XCTAssertEqual(four.value, 4)
    XCTAssertEqual(five.value, [1, 2, 3, 4, 5])
    XCTAssertEqual(array.value, [1, 2])
    XCTAssertEqual(statedArray.value, [1, 2])
  }

  func testAnyOfSameTypedPromisesIsATuple() {
    let two = any(Promise(1), Promise<Int>(Test.Error.code42))
    let three = any(Promise(1), Promise(2), Promise(3)).then { triple in triple.2.value }
    let array = any([Promise(1), Promise(2)])
    let _: Promise<[Maybe<Int>]> = array

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(two.value?.0.value, 1)
    XCTAssertEqual(two.value?.1.error as? Test.Error, .code42)
    XCTAssertEqual(three.value, 3)
    XCTAssertEqual(array.value?.count, 2)
  }

  // MARK: Other google/promises idioms

  func testGoogleStyleIdioms() {
    let pending = Promise<Int>.pending()
    XCTAssert(pending.isPending)
    var count = 0
    let chain = Promise<Int> { fulfill, _ in fulfill(42) }
      .then { value in count += value }
      .then(on: .global()) { value in value * 2 }
      .recover { _ in 0 }
      .always { count += 1 }
    let rejected = Promise<Int> { _, reject in reject(Test.Error.code13) }.catch { _ in count += 100
    }
    pending.fulfill(1)

    XCTAssert(waitForPromises(timeout: 10))
    XCTAssertEqual(chain.value, 84)
    XCTAssertEqual(count, 143)
    XCTAssertEqual(rejected.error as? Test.Error, .code13)
    XCTAssertEqual(pending.value, 1)
  }
}
