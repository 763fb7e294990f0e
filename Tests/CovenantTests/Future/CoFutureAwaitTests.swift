import Covenant
import Dispatch
import Foundation
import XCTest

final class CoFutureAwaitTests: XCTestCase {
  func testAwaitSuspendsUntilCompletedFromAnotherThread() {
    let promise = CoPromise<Int>()
    coRun(resolvingWhileSuspended: { promise.success(11) }) {
      XCTAssertEqual(try promise.await(), 11)
    }
  }

  func testAwaitThrowsTheFailure() {
    let promise = CoPromise<Int>()
    DispatchQueue.global().async { promise.fail(TestError(3)) }
    coRun {
      XCTAssertThrowsError(try promise.await()) { XCTAssertEqual($0 as? TestError, TestError(3)) }
    }
  }

  func testAwaitOutsideCoroutine() {
    XCTAssertEqual(try CoFuture<Int>(result: .success(1)).await(), 1, "complete: returns at once")
    XCTAssertThrowsError(try CoPromise<Int>().await()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertThrowsError(try CoPromise<Int>().await(timeout: .milliseconds(1))) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  func testAwaitTimeoutThrowsTimeoutWithoutCancellingTheFuture() {
    let promise = CoPromise<Int>()
    coRun {
      XCTAssertThrowsError(try promise.await(timeout: .milliseconds(20))) {
        XCTAssertTrue(isFutureError($0, .timeout))
      }
      XCTAssertFalse(promise.isCanceled)
      XCTAssertNil(promise.result)
      DispatchQueue.global().async { promise.success(4) }
      XCTAssertEqual(try promise.await(timeout: .seconds(5)), 4, "still usable afterwards")
    }
  }

  func testAwaitTimeoutReturnsValueInTime() {
    let promise = CoPromise<String>()
    coRun(resolvingWhileSuspended: { promise.success("in time") }) {
      XCTAssertEqual(try promise.await(timeout: .seconds(5)), "in time")
    }
    coRun { XCTAssertEqual(try CoFuture(result: .success(1)).await(timeout: .seconds(-1)), 1) }
  }

  func testCancelWhileAwaitingThrowsCanceled() {
    let promise = CoPromise<Int>()
    coRun(resolvingWhileSuspended: { promise.cancel() }) {
      XCTAssertThrowsError(try promise.await()) { XCTAssertTrue(isFutureError($0, .canceled)) }
    }
  }

  func testCancelledCoroutineAwaitThrowsCoroutineCanceled() {
    let scope = CoScope()
    let promise = CoPromise<Int>()
    let outcome = Box<String>("")
    let done = DispatchSemaphore(value: 0)
    let queue = DispatchQueue(label: "awaiting")
    queue.startCoroutine(in: scope) {
      do { _ = try promise.await() } catch { outcome.value = "\(error)" }
      done.signal()
    }
    queue.sync {}  // the coroutine waits
    scope.cancel()
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
    XCTAssertNil(promise.result, "the future is not cancelled with the coroutine")
  }

  // MARK: init(task:)

  func testTaskInitStartsAtOnceOnTheCurrentThread() {
    let thread = Box<Thread?>(nil)
    let future = CoFuture<Int> {
      thread.value = Thread.current
      XCTAssertTrue(Coroutine.isInsideCoroutine)
      return 5
    }
    XCTAssertTrue(thread.value === Thread.current)
    XCTAssertEqual(try future.result?.get(), 5, "ran to completion inside init")
  }

  func testTaskInitThrowing() {
    let future = CoFuture<Int> { throw TestError(12) }
    XCTAssertThrowsError(try future.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(12))
    }
  }

  func testSeedReduceExample() {
    let promises = (1...5).map { _ in CoPromise<Int>() }
    let array: [CoFuture<Int>] = promises
    let sum = CoFuture { try array.reduce(0) { try $0 + $1.await() } }
    XCTAssertNil(sum.result, "suspended on the first await")
    for (index, promise) in promises.enumerated().reversed() {
      DispatchQueue.global().async { promise.success(index + 1) }
    }
    let done = DispatchSemaphore(value: 0)
    sum.whenComplete { _ in done.signal() }
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(try sum.result?.get(), 15)
  }

  func testCancellingTaskFutureCancelsItsCoroutine() {
    let pending = CoPromise<Int>()
    let awaitError = Box<String>("")
    let future = CoFuture<Int> {
      do { return try pending.await() } catch {
        awaitError.value = "\(error)"
        throw error
      }
    }
    future.cancel()
    XCTAssertTrue(future.isCanceled)
    waitUntil { awaitError.value == "\(CoroutineError.canceled)" }
    XCTAssertNil(pending.result)
  }

  func testTaskFutureInsideCoroutine() {
    coRun {
      let inner = CoFuture<Int> {
        try Coroutine.delay(.milliseconds(5))
        return 3
      }
      XCTAssertEqual(try inner.await() * 2, 6)
    }
  }

  // MARK: coroutineFuture

  func testCoroutineFutureRunsOnTheScheduler() {
    let (queue, key) = DispatchQueue.tagged("coroutineFuture")
    let future = queue.coroutineFuture { () -> String in
      XCTAssertEqual(DispatchQueue.getSpecific(key: key), "coroutineFuture")
      let value = try CoFuture(result: .success("a")).await()
      try Coroutine.delay(.milliseconds(2))
      XCTAssertEqual(DispatchQueue.getSpecific(key: key), "coroutineFuture")
      return value + "b"
    }
    coRun { XCTAssertEqual(try future.await(), "ab") }
  }

  func testCoroutineFutureFailsWithTheThrownError() {
    let future = DispatchQueue.global().coroutineFuture { () -> Int in throw TestError(13) }
    coRun {
      XCTAssertThrowsError(try future.await()) { XCTAssertEqual($0 as? TestError, TestError(13)) }
    }
  }

  func testCancellingCoroutineFutureCancelsTheCoroutine() {
    let reachedAwait = DispatchSemaphore(value: 0)
    let awaitError = Box<String>("")
    let future = DispatchQueue.global().coroutineFuture { () -> Int in
      reachedAwait.signal()
      do { return try CoPromise<Int>().await() } catch {
        awaitError.value = "\(error)"
        throw error
      }
    }
    reachedAwait.wait()
    future.cancel()
    waitUntil { awaitError.value == "\(CoroutineError.canceled)" }
    XCTAssertTrue(future.isCanceled)
  }

  func testFuturesAwaitedAcrossSchedulers() {
    let queueA = DispatchQueue(label: "A")
    let queueB = DispatchQueue(label: "B", attributes: .concurrent)
    let futures = (0..<50).map { index in queueB.coroutineFuture { index } }
    let sum = queueA.coroutineFuture { try futures.reduce(0) { try $0 + $1.await() } }
    coRun { XCTAssertEqual(try sum.await(), (0..<50).reduce(0, +)) }
  }
}
