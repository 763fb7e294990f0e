import Covenant
import Foundation
import XCTest

// Callback-style APIs, one per shape.
private func voidAPI(_ done: @escaping @Sendable () -> Void) {
  DispatchQueue.global().async { done() }
}
private func valueAPI(_ v: Int, _ done: @escaping @Sendable (Int) -> Void) {
  DispatchQueue.global().async { done(v) }
}
private func optionalAPI(_ v: Int?, _ done: @escaping (Int?) -> Void) { done(v) }
private func errorAPI(_ e: Error?, _ done: @escaping (Error?) -> Void) { done(e) }
private func valueErrorAPI(_ v: Int, _ e: Error?, _ done: @escaping (Int, Error?) -> Void) {
  done(v, e)
}
private func errorValueAPI(_ e: Error?, _ v: Int, _ done: @escaping (Error?, Int) -> Void) {
  done(e, v)
}
private func optionalErrorAPI(_ v: Int?, _ e: Error?, _ done: @escaping (Int?, Error?) -> Void) {
  done(v, e)
}
private func errorOptionalAPI(_ e: Error?, _ v: Int?, _ done: @escaping (Error?, Int?) -> Void) {
  done(e, v)
}
private func pairAPI(
  _ a: Int?, _ b: Double?, _ e: Error?, _ done: @escaping (Int?, Double?, Error?) -> Void
) { done(a, b, e) }
private func resultAPI(_ r: Result<Int, Error>, _ done: @escaping (Result<Int, Error>) -> Void) {
  done(r)
}

final class PromiseWrapTests: PromiseTestCase {
  func testNoArgumentHandler() throws {
    let done = wrap(on: queue.queue) { handler in voidAPI(handler) }
    let _: Promise<Void> = done
    XCTAssertNoThrow(try wait(for: done, timeout: 2))
  }

  func testNoArgumentHandlerGoogleForm() throws {
    let done: Promise<Any?> = wrap(on: queue.queue) { handler in voidAPI(handler) }
    XCTAssertNil(try wait(for: done, timeout: 2) as Any?? ?? nil)
    XCTAssertTrue(done.isFulfilled)
  }

  func testValueHandler() throws {
    let promise = wrap(on: queue.queue) { handler in valueAPI(42, handler) }
    let _: Promise<Int> = promise
    XCTAssertEqual(try wait(for: promise, timeout: 2), 42)
  }

  func testOptionalValueHandler() throws {
    let some = wrap(on: queue.queue) { handler in optionalAPI(42, handler) }
    let none = wrap(on: queue.queue) { handler in optionalAPI(nil, handler) }
    let _: Promise<Int?> = some
    XCTAssertEqual(try wait(for: some, timeout: 2), 42)
    XCTAssertEqual(try wait(for: none, timeout: 2), nil)
    let explicit: Promise<Int?> = wrap(on: queue.queue) { (handler: @escaping (Int?) -> Void) in
      handler(7)
    }
    XCTAssertEqual(try wait(for: explicit, timeout: 2), 7)
  }

  func testErrorHandler() {
    let fine = wrap(on: queue.queue) { handler in errorAPI(nil, handler) }
    let _: Promise<Void> = fine
    let failed = wrap(on: queue.queue) { handler in errorAPI(TestError(1), handler) }
    settle()
    XCTAssertTrue(fine.isFulfilled)
    XCTAssertEqual(failed.error as? TestError, TestError(1))
  }

  func testValueErrorHandler() {
    let fine = wrap(on: queue.queue) { handler in valueErrorAPI(1, nil, handler) }
    let _: Promise<Int> = fine
    let failed = wrap(on: queue.queue) { handler in valueErrorAPI(1, TestError(2), handler) }
    settle()
    XCTAssertEqual(fine.value, 1)
    XCTAssertEqual(failed.error as? TestError, TestError(2))
  }

  func testErrorValueHandler() {
    let fine = wrap(on: queue.queue) { handler in errorValueAPI(nil, 1, handler) }
    let _: Promise<Int> = fine
    let failed = wrap(on: queue.queue) { handler in errorValueAPI(TestError(2), 1, handler) }
    settle()
    XCTAssertEqual(fine.value, 1)
    XCTAssertEqual(failed.error as? TestError, TestError(2))
  }

  func testOptionalValueErrorHandler() throws {
    let fine = wrap(on: queue.queue) { handler in optionalErrorAPI(1, nil, handler) }
    let _: Promise<Int?> = fine
    let empty = wrap(on: queue.queue) { handler in optionalErrorAPI(nil, nil, handler) }
    let failed = wrap(on: queue.queue) { handler in optionalErrorAPI(1, TestError(2), handler) }
    settle()
    XCTAssertEqual(fine.value, 1)
    XCTAssertTrue(empty.isFulfilled)
    XCTAssertNil(empty.value as Any?)  // nil, as in google/promises (issue 10)
    XCTAssertEqual(try empty.result?.get(), .some(nil))
    XCTAssertEqual(failed.error as? TestError, TestError(2))
  }

  func testErrorOptionalValueHandler() {
    let fine = wrap(on: queue.queue) { handler in errorOptionalAPI(nil, 1, handler) }
    let _: Promise<Int?> = fine
    let failed = wrap(on: queue.queue) { handler in errorOptionalAPI(TestError(2), nil, handler) }
    settle()
    XCTAssertEqual(fine.value, 1)
    XCTAssertEqual(failed.error as? TestError, TestError(2))
  }

  func testTwoValuesErrorHandler() throws {
    let fine = wrap(on: queue.queue) { handler in pairAPI(1, nil, nil, handler) }
    let _: Promise<(Int?, Double?)> = fine
    let failed = wrap(on: queue.queue) { handler in pairAPI(1, 2, TestError(3), handler) }
    let pair = try wait(for: fine, timeout: 2)
    XCTAssertEqual(pair.0, 1)
    XCTAssertNil(pair.1)
    settle()
    XCTAssertEqual(failed.error as? TestError, TestError(3))
  }

  func testResultHandler() {
    let fine = wrap(on: queue.queue) { handler in resultAPI(.success(1), handler) }
    let _: Promise<Int> = fine
    let failed = wrap(on: queue.queue) { handler in resultAPI(.failure(TestError(2)), handler) }
    settle()
    XCTAssertEqual(fine.value, 1)
    XCTAssertEqual(failed.error as? TestError, TestError(2))
  }

  func testMultiStatementClosuresPickTheSameShapes() {
    let counter = Recorder<Int>()
    let value = wrap(on: queue.queue) { handler in
      counter.append(1)
      valueAPI(1, handler)
    }
    let _: Promise<Int> = value
    let valueError = wrap(on: queue.queue) { handler in
      counter.append(2)
      valueErrorAPI(1, nil, handler)
    }
    let _: Promise<Int> = valueError
    let result = wrap(on: queue.queue) { handler in
      counter.append(3)
      resultAPI(.success(1), handler)
    }
    let _: Promise<Int> = result
    settle()
    XCTAssertEqual(counter.count, 3)
  }

  func testFirstCallWins() {
    let promise = wrap(on: queue.queue) { (handler: @escaping @Sendable (Int, Error?) -> Void) in
      handler(1, nil)
      handler(2, nil)
      handler(3, TestError())
    }
    settle()
    XCTAssertEqual(promise.value, 1)
  }

  func testThrowingWorkRejects() {
    let promise = wrap(on: queue.queue) { (_: @escaping @Sendable (Int) -> Void) in
      throw TestError(4)
    }
    settle()
    XCTAssertEqual(promise.error as? TestError, TestError(4))
  }

  func testWorkRunsOnGivenQueueNotInline() {
    let onQueue = Recorder<Bool>()
    let q = queue
    let inline = wrap(on: .main) { (handler: @escaping @Sendable () -> Void) in
      onQueue.append(Thread.isMainThread)
      handler()
    }
    XCTAssertTrue(inline.isPending, "ran inline")
    wrap(on: q.queue) { (handler: @escaping @Sendable (Int) -> Void) in
      onQueue.append(q.isCurrent)
      handler(1)
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true, true])
  }

  func testPromiseLivesUntilTheHandlerIsCalledThenIsReleased() {
    let stored = Recorder<@Sendable (Int) -> Void>()
    weak var weakPromise: Promise<Int>?
    do {
      let promise = wrap(on: queue.queue) { handler in stored.append(handler) }
      weakPromise = promise
    }
    XCTAssertTrue(eventually { stored.count == 1 }, "work did not run")
    runBriefly()
    XCTAssertNotNil(weakPromise, "released before the handler was called")
    stored.elements.first?(5)
    XCTAssertEqual(weakPromise?.value, 5)
    stored.removeAll()  // the handler itself refers to the promise, as in google/promises
    settle()
    XCTAssertNil(weakPromise)
  }
}
