import Covenant
import Foundation
import XCTest

final class CoroutineAwaitTests: XCTestCase {
  private let queue = DispatchQueue(label: "CoroutineAwaitTests")

  private func runCoroutine(
    timeout: TimeInterval = 5, _ body: @escaping @Sendable () throws -> Void,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let done = expectation(description: "coroutine finished")
    queue.startCoroutine {
      do { try body() } catch { XCTFail("unexpected error \(error)", file: file, line: line) }
      done.fulfill()
    }
    wait(for: [done], timeout: timeout)
  }

  func testAwaitOutsideCoroutineThrows() {
    XCTAssertFalse(Coroutine.isInsideCoroutine)
    XCTAssertThrowsError(
      try Coroutine.await { (callback: @escaping @Sendable () -> Void) in callback() }
    ) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertThrowsError(try Promise<Int>().await()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertThrowsError(try Coroutine.delay(.milliseconds(1)))
    XCTAssertThrowsError(try Coroutine.yield())
  }

  func testResolvedPromiseAwaitReturnsAtOnceEvenOutside() throws {
    // Already resolved: nothing to suspend for.
    XCTAssertEqual(try Promise(3).await(), 3)
  }

  func testCallbackCalledSynchronouslyBeforeSuspension() {
    runCoroutine {
      let value: Int = try Coroutine.await { callback in callback(42) }
      XCTAssertEqual(value, 42)
    }
  }

  func testCallbackCalledFromAnotherThread() {
    runCoroutine {
      let value: String = try Coroutine.await { callback in
        Thread.detachNewThread { callback("thread") }
      }
      XCTAssertEqual(value, "thread")
    }
  }

  func testCallbackCalledTwiceSecondIgnored() {
    let secondCallDone = expectation(description: "second call returned")
    runCoroutine {
      let value: Int = try Coroutine.await { callback in
        callback(1)
        DispatchQueue.global().async {
          callback(2)
          secondCallDone.fulfill()
        }
      }
      XCTAssertEqual(value, 1)
      // Suspend again: a stale second call must not resume this later await.
      let next: Int = try Coroutine.await { callback in
        DispatchQueue.global().async { callback(3) }
      }
      XCTAssertEqual(next, 3)
    }
    wait(for: [secondCallDone], timeout: 5)
  }

  func testAwaitWithTwoAndThreeValues() {
    runCoroutine {
      let pair: (Int, String) = try Coroutine.await { callback in
        DispatchQueue.global().async { callback(1, "a") }
      }
      XCTAssertEqual(pair.0, 1)
      XCTAssertEqual(pair.1, "a")
      let triple: (Int, Int, Int) = try Coroutine.await { callback in callback(1, 2, 3) }
      XCTAssertEqual([triple.0, triple.1, triple.2], [1, 2, 3])
      try Coroutine.await { (callback: @escaping @Sendable () -> Void) in
        DispatchQueue.global().async(execute: callback)
      }
    }
  }

  func testDelaySuspends() {
    runCoroutine {
      let start = DispatchTime.now()
      try Coroutine.delay(.milliseconds(20))
      XCTAssertGreaterThanOrEqual(
        DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds, 19_000_000)
    }
  }

  func testYieldLetsOtherWorkRun() {
    let order = Box<[String]>([])
    runCoroutine { [queue] in
      queue.async { order.value.append("other") }
      order.value.append("before")
      try Coroutine.yield()
      order.value.append("after")
    }
    XCTAssertEqual(order.value, ["before", "other", "after"])
  }

  func testAwaitRejectedPromiseThrowsItsError() {
    runCoroutine {
      XCTAssertThrowsError(
        try Promise<Int>(on: .global()) { () -> Int in throw PromiseError.timedOut }.await()
      ) {
        XCTAssertEqual($0 as? PromiseError, .timedOut)
      }
    }
  }

  func testPromiseAwaitTimeout() {
    runCoroutine {
      let never = Promise<Int>()
      XCTAssertThrowsError(try never.await(timeout: .milliseconds(10))) {
        XCTAssertEqual($0 as? CoFutureError, .timeout)
      }
      XCTAssertTrue(never.isPending)
      let soon = Promise<Int>(on: .global()) { 4 }
      XCTAssertEqual(try soon.await(timeout: .seconds(5)), 4)
      never.fulfill(0)
    }
  }

  func testAwaitPromiseSuspendsInsideAndBlocksOutside() throws {
    runCoroutine {
      XCTAssertEqual(try awaitPromise(Promise<Int>(on: .global()) { 8 }), 8)
    }
    XCTAssertEqual(try awaitPromise(Promise<Int>(on: .global()) { 9 }), 9)
  }

  func testCancellationThroughScopeInterruptsPendingAwait() {
    let scope = CoScope()
    let threw = expectation(description: "await threw canceled")
    let suspended = expectation(description: "suspended")
    let never = Promise<Int>()
    queue.startCoroutine(in: scope) {
      XCTAssertThrowsError(
        try Coroutine.await { (callback: @escaping @Sendable (Int) -> Void) in suspended.fulfill() }
      ) { XCTAssertEqual($0 as? CoroutineError, .canceled) }
      XCTAssertTrue(Coroutine.isCanceled)
      // Later awaits throw at once.
      XCTAssertThrowsError(try never.await()) { XCTAssertEqual($0 as? CoroutineError, .canceled) }
      threw.fulfill()
    }
    wait(for: [suspended], timeout: 5)
    scope.cancel()
    wait(for: [threw], timeout: 5)
    never.fulfill(1)
  }

  /// Kotlin's default start: a coroutine cancelled before its body starts never runs it (its
  /// awaits would all throw; a free permit or a resolved future would not even suspend).
  /// `CanceledBeforeStartTests` has the other ways to be cancelled before the start.
  func testCoroutineStartedInCanceledScopeNeverRunsItsBody() throws {
    let scope = CoScope()
    scope.cancel()
    let ran = Box(false)
    queue.startCoroutine(in: scope) {
      ran.value = true
      try Coroutine.delay(.seconds(10))
    }
    try scope.join()
    XCTAssertFalse(ran.value)
  }

  func testCoroutineCancelledOnceRunningThrowsAtItsNextAwait() {
    let scope = CoScope()
    let done = expectation(description: "done")
    queue.startCoroutine(in: scope) {
      scope.cancel()
      XCTAssertTrue(Coroutine.isCanceled)
      XCTAssertThrowsError(try Coroutine.delay(.seconds(10)))
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
  }

  func testDeferAndReleasesRunWhenBodyThrows() {
    final class Token: Sendable {}
    final class WeakBox: @unchecked Sendable { weak var token: Token? }
    let weakToken = WeakBox()
    let deferred = expectation(description: "defer ran")
    let scope = CoScope()
    queue.startCoroutine(in: scope) {
      let token = Token()
      weakToken.token = token
      defer { deferred.fulfill() }
      try Coroutine.delay(.seconds(30))
      withExtendedLifetime(token) {}
    }
    queue.sync {}  // the coroutine waits in its delay
    scope.cancel()
    wait(for: [deferred], timeout: 5)
    queue.sync {}
    XCTAssertNil(weakToken.token)
  }

  func testManyResumptionRacesWithSuspension() {
    // Resumption arriving at every possible moment relative to the switch-out.
    let count = 5_000
    let done = expectation(description: "all resumed")
    done.expectedFulfillmentCount = count
    let concurrent = DispatchQueue(label: "race", attributes: .concurrent)
    for index in 0..<count {
      concurrent.startCoroutine {
        let value: Int = try Coroutine.await { callback in
          DispatchQueue.global().async { callback(index) }
        }
        XCTAssertEqual(value, index)
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 30)
  }
}
