import Covenant
import Foundation
import XCTest

// As in google/promises' tests: module-wide, so every `String` here
// also conforms to `Error` (and `Promise("text")` still means the value initializer).
extension String: @retroactive Error {}

final class CustomNSError: NSError, @unchecked Sendable {}

final class PromiseThenTests: PromiseTestCase {
  func testFulfilledPath() throws {
    let source = Promise<Int>()
    let derived = source.then(on: queue.queue) { $0 + 1 }
    source.fulfill(41)
    XCTAssertEqual(try wait(for: derived, timeout: 2), 42)
  }

  func testRejectedPathSkipsTheBlock() {
    let ran = Recorder<Int>()
    let derived = Promise<Int>(TestError(1)).then(on: queue.queue) { value -> Int in
      ran.append(value)
      return value
    }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(1))
    XCTAssertEqual(ran.count, 0)
  }

  func testAlreadyResolvedSourceRunsAsynchronously() {
    let ran = Recorder<Int>()
    let derived = Promise(1).then(on: queue.queue) { ran.append($0) }
    settle()
    XCTAssertEqual(ran.elements, [1])
    XCTAssertEqual(derived.value, 1)
  }

  func testBlockIsNeverRunInline() {
    let ran = Recorder<Int>()
    Promise(1).then(on: .main) { ran.append($0) }
    XCTAssertEqual(ran.count, 0, "ran inline")
    settle()
    XCTAssertEqual(ran.count, 1)
  }

  func testThrowingBlockRejects() {
    let derived = Promise(1).then(on: queue.queue) { _ -> Int in throw TestError(2) }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(2))
  }

  func testBlockRunsOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise(1).then(on: q.queue) { _ in onQueue.append(q.isCurrent) }
    Promise(1).then(on: q.queue) { $0 + 1 }.then(on: q.queue) { _ in onQueue.append(q.isCurrent) }
    Promise(1).then(on: q.queue) { _ -> Promise<Int> in
      onQueue.append(q.isCurrent)
      return Promise(2)
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true, true, true])
  }

  func testDefaultQueueIsPromisesQueue() {
    let onMain = Recorder<Bool>()
    Promise(1).then { _ in onMain.append(Thread.isMainThread) }
    settle()
    XCTAssertEqual(onMain.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { $0.then(on: queue.queue) { $0 + 1 } }
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) { $0.then(on: queue.queue) { _ in } }
    checkDerivedLifetime(resolving: { $0.fulfill(1) }) {
      $0.then(on: queue.queue) { Promise($0 + 1) }
    }
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) {
      $0.then(on: queue.queue) { $0 + 1 }
    }
  }

  // MARK: Overloads

  func testVoidBlockPassesTheValueThrough() throws {
    let seen = Recorder<Int>()
    let derived = Promise(5).then(on: queue.queue) { v in seen.append(v) }
    let _: Promise<Int> = derived  // the pass-through overload, not Promise<Void>
    XCTAssertEqual(try wait(for: derived, timeout: 2), 5)
    XCTAssertEqual(seen.elements, [5])
  }

  func testMultiStatementVoidBlockPassesTheValueThrough() throws {
    let seen = Recorder<Int>()
    let derived = Promise(5).then(on: queue.queue) { v in
      seen.append(v)
      seen.append(v * 2)
    }
    let _: Promise<Int> = derived
    XCTAssertEqual(try wait(for: derived, timeout: 2), 5)
    XCTAssertEqual(seen.elements, [5, 10])
  }

  func testVoidBlockThatThrowsRejects() {
    let derived = Promise(5).then(on: queue.queue) { _ in throw TestError(3) }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(3))
  }

  func testValueBlockTransforms() throws {
    let derived = Promise(5).then(on: queue.queue) { $0 * 2 }.then(on: queue.queue) { "\($0)" }
    let _: Promise<String> = derived
    XCTAssertEqual(try wait(for: derived, timeout: 2), "10")
  }

  func testPromiseReturningBlockAdopts() throws {
    let adopted = Promise(5).then(on: queue.queue) { v in Promise(v) }
    let _: Promise<Int> = adopted  // not Promise<Promise<Int>>
    XCTAssertEqual(try wait(for: adopted, timeout: 2), 5)
  }

  func testAdoptsPendingPromiseOutcome() throws {
    let inner = Promise<String>()
    let adopted = Promise(5).then(on: queue.queue) { _ in inner }
    runBriefly()
    XCTAssertTrue(adopted.isPending)
    inner.fulfill("late")
    XCTAssertEqual(try wait(for: adopted, timeout: 2), "late")
  }

  func testAdoptsRejectedPromise() {
    let adopted = Promise(5).then(on: queue.queue) { _ in Promise<Int>(TestError(4)) }
    settle()
    XCTAssertEqual(adopted.error as? TestError, TestError(4))
  }

  // MARK: Error-returning blocks

  func testReturningAnyErrorRejects() {
    let derived = Promise(1).then(on: queue.queue) { _ -> Error in TestError(5) }
    settle()
    XCTAssertTrue(derived.isRejected)
    XCTAssertEqual(derived.error as? TestError, TestError(5))
  }

  func testReturningSendableErrorExistentialOrErrorClassRejects() {
    final class ClassError: Error, @unchecked Sendable {}
    let existential = Promise(1).then(on: queue.queue) { _ -> any Error & Sendable in TestError(5) }
    let classError = Promise(1).then(on: queue.queue) { _ in ClassError() }
    settle()
    XCTAssertEqual(existential.error as? TestError, TestError(5))
    XCTAssertTrue(classError.error is ClassError)
  }

  func testReturningNSErrorRejects() {
    let error = NSError(domain: "test", code: 7)
    let derived = Promise(1).then(on: queue.queue) { _ in error }
    let subclassed = Promise(1).then(on: queue.queue) { _ in CustomNSError(domain: "sub", code: 8) }
    settle()
    XCTAssertEqual((derived.error as? NSError)?.code, 7)
    XCTAssertEqual((subclassed.error as? NSError)?.code, 8)
  }

  func testValueTypeConformingToErrorIsAValue() throws {
    let derived = Promise(1).then(on: queue.queue) { _ -> String in "just a string" }
    XCTAssertEqual(try wait(for: derived, timeout: 2), "just a string")
    XCTAssertTrue(derived.isFulfilled)
  }

  // `then`'s documentation: a value of a type declared as an error rejects, whatever the
  // declared result type; a standard type with a retroactive conformance stays a value.
  func testConcreteErrorStructRejects() {
    let derived = Promise(1).then(on: queue.queue) { _ in TestError(6) }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(6))
  }

  func testAnyHoldingAnErrorRejectsAndAnyHoldingAStringIsAValue() throws {
    let error = Promise(1).then(on: queue.queue) { _ -> Any in TestError(9) }
    let string = Promise(1).then(on: queue.queue) { _ -> Any in "text" }
    let optional = Promise(1).then(on: queue.queue) { _ -> TestError? in TestError(10) }
    settle()
    XCTAssertEqual(error.error as? TestError, TestError(9))
    XCTAssertEqual(string.value as? String, "text")
    XCTAssertEqual(optional.value, TestError(10))  // optionals are values
  }

  func testValueInitializerAppliesTheSameRule() {
    XCTAssertEqual(Promise(TestError(11)).error as? TestError, TestError(11))
    XCTAssertEqual(Promise("text").value, "text")
    XCTAssertEqual(Promise<Any>(TestError(12) as Any).error as? TestError, TestError(12))
    XCTAssertEqual(Promise<Any>(5 as Any).value as? Int, 5)
  }

  func testLongChainKeepsOrder() throws {
    var chained = Promise(0)
    for _ in 0..<1_000 { chained = chained.then(on: queue.queue) { $0 + 1 } }
    XCTAssertEqual(try wait(for: chained, timeout: 5), 1_000)
  }
}
