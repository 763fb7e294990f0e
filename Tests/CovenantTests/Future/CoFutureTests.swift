import Covenant
import Dispatch
import Foundation
import XCTest

final class CoFutureTests: XCTestCase {
  // MARK: State and completion

  func testInitResult() {
    XCTAssertEqual(try CoFuture<Int>(result: .success(3)).result?.get(), 3)
    let failed = CoFuture<Int>(result: .failure(TestError(1)))
    XCTAssertThrowsError(try failed.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(1))
    }
    XCTAssertFalse(failed.isCanceled)
  }

  func testPromiseStartsPendingAndFirstCompletionWins() {
    let promise = CoPromise<Int>()
    XCTAssertNil(promise.result)
    promise.success(1)
    promise.success(2)
    promise.fail(TestError())
    promise.complete(with: .success(3))
    promise.cancel()
    XCTAssertEqual(try promise.result?.get(), 1)
    XCTAssertFalse(promise.isCanceled)
  }

  func testFailAndCompleteWithResult() {
    let failed = CoPromise<Int>()
    failed.fail(TestError(2))
    XCTAssertThrowsError(try failed.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(2))
    }
    let completed = CoPromise<String>()
    completed.complete(with: .success("x"))
    XCTAssertEqual(try completed.result?.get(), "x")
    let void = CoPromise<Void>()
    void.success()
    XCTAssertNotNil(try void.result?.get())
  }

  func testCompleteWithFuture() {
    let source = CoPromise<Int>()
    let target = CoPromise<Int>()
    target.complete(with: source)
    XCTAssertNil(target.result)
    source.success(5)
    XCTAssertEqual(try target.result?.get(), 5)

    let ready = CoPromise<Int>()
    ready.complete(with: CoFuture(result: .failure(TestError(3))))
    XCTAssertThrowsError(try ready.result?.get()) { XCTAssertEqual($0 as? TestError, TestError(3)) }

    let selfish = CoPromise<Int>()
    selfish.complete(with: selfish)  // ignored, not a deadlock
    XCTAssertNil(selfish.result)
  }

  func testCallbackFormInit() {
    let stored = Box<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
    let future = CoFuture<Int>(promise: { stored.value = $0 })
    XCTAssertNil(future.result)
    stored.value?(.success(8))
    stored.value?(.success(9))
    XCTAssertEqual(try future.result?.get(), 8)
    let sync = CoFuture<Int>(promise: { $0(.failure(TestError(4))) })
    XCTAssertThrowsError(try sync.result?.get())
  }

  // MARK: Callbacks

  func testCallbacksRunSynchronouslyOnTheCompletingThread() {
    let promise = CoPromise<Int>()
    let log = Recorder<String>()
    let completingThread = Box<Thread?>(nil)
    let sameThread = Box(true)
    promise.whenComplete { result in
      log.append("complete \((try? result.get()) ?? -1)")
      if Thread.current != completingThread.value { sameThread.value = false }
    }
    promise.whenSuccess { log.append("success \($0)") }
    promise.whenFailure { _ in log.append("failure") }
    promise.whenCanceled { log.append("canceled") }
    let done = DispatchSemaphore(value: 0)
    // A dispatch worker rather than `Thread.detachNewThread`: storing a detached thread's own
    // `Thread` (which holds the block) in `completingThread` (which the block holds) would make
    // a cycle that leaks both.
    DispatchQueue.global().async {
      completingThread.value = Thread.current
      promise.success(7)
      log.append("after success")  // every callback already ran
      done.signal()
    }
    done.wait()
    XCTAssertEqual(log.elements, ["complete 7", "success 7", "after success"])
    XCTAssertTrue(sameThread.value)
  }

  func testCallbacksRunAtOnceWhenAlreadyComplete() {
    let log = Recorder<String>()
    let future = CoFuture<Int>(result: .failure(TestError()))
    future.whenComplete { _ in log.append("complete") }
    future.whenFailure { _ in log.append("failure") }
    future.whenSuccess { _ in log.append("success") }
    future.whenCanceled { log.append("canceled") }
    XCTAssertEqual(log.elements, ["complete", "failure"])
  }

  func testCancelFailsWithCanceledAndRunsCancelCallbacks() {
    let promise = CoPromise<Int>()
    let log = Recorder<String>()
    promise.whenCanceled { log.append("canceled") }
    promise.whenFailure { log.append(isFutureError($0, .canceled) ? "failure canceled" : "other") }
    promise.cancel()
    XCTAssertTrue(promise.isCanceled)
    XCTAssertThrowsError(try promise.result?.get()) { XCTAssertTrue(isFutureError($0, .canceled)) }
    XCTAssertEqual(log.elements, ["canceled", "failure canceled"])
    promise.cancel()  // idempotent
    XCTAssertEqual(log.count, 2)
  }

  func testCancelAfterCompletionDoesNothing() {
    let promise = CoPromise<Int>()
    promise.success(1)
    promise.cancel()
    XCTAssertFalse(promise.isCanceled)
    XCTAssertEqual(try promise.result?.get(), 1)
  }

  func testPendingFutureDeinitFailsObserversWithCanceled() {
    let log = Recorder<String>()
    weak var weakPromise: CoPromise<Int>?
    do {
      let promise = CoPromise<Int>()
      weakPromise = promise
      promise.whenComplete { result in
        if case .failure(let error) = result, isFutureError(error, .canceled) {
          log.append("canceled")
        }
      }
      promise.whenCanceled { log.append("whenCanceled") }
    }
    XCTAssertNil(weakPromise)
    XCTAssertEqual(log.elements, ["canceled", "whenCanceled"])
  }

  func testDerivedFutureIsCanceledWhenPendingParentGoesAway() {
    let log = Recorder<String>()
    var mapped: CoFuture<Int>?
    do {
      let promise = CoPromise<Int>()
      mapped = promise.map { $0 + 1 }
    }
    mapped?.whenCanceled { log.append("canceled") }
    XCTAssertEqual(mapped?.isCanceled, true)
    XCTAssertEqual(log.elements, ["canceled"])
  }

  func testHashableByIdentity() {
    let a = CoPromise<Int>()
    let b = CoPromise<Int>()
    XCTAssertEqual(a, a)
    XCTAssertNotEqual(a, b)
    let set: Set<CoFuture<Int>> = [a, b, a]
    XCTAssertEqual(set.count, 2)
    XCTAssertTrue(set.contains(a))
  }

  // MARK: map / mapResult / recover

  func testMapSuccessFailureThrowAndCancel() {
    let source = CoPromise<Int>()
    let mapped = source.map { "\($0 * 2)" }
    XCTAssertNil(mapped.result)
    source.success(21)
    XCTAssertEqual(try mapped.result?.get(), "42")

    let failing = CoPromise<Int>()
    let mappedFailure = failing.map { $0 + 1 }
    failing.fail(TestError(5))
    XCTAssertThrowsError(try mappedFailure.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(5))
    }

    let throwing = CoFuture<Int>(result: .success(1)).map { _ -> Int in throw TestError(6) }
    XCTAssertThrowsError(try throwing.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(6))
    }

    let canceledSource = CoPromise<Int>()
    let mappedCanceled = canceledSource.map { $0 }
    canceledSource.cancel()
    XCTAssertTrue(mappedCanceled.isCanceled)
  }

  func testMapOfCompleteFutureRunsAtOnce() {
    let ran = Box(false)
    let mapped = CoFuture<Int>(result: .success(2)).map { value -> Int in
      ran.value = true
      return value * 3
    }
    XCTAssertTrue(ran.value)
    XCTAssertEqual(try mapped.result?.get(), 6)
  }

  func testCancellingDerivedFutureCancelsParentAndSkipsTransform() {
    let source = CoPromise<Int>()
    let ran = Box(false)
    let mapped = source.map { value -> Int in
      ran.value = true
      return value
    }
    mapped.cancel()
    XCTAssertTrue(mapped.isCanceled)
    XCTAssertTrue(source.isCanceled)
    XCTAssertFalse(ran.value)

    let chainSource = CoPromise<Int>()
    let chained = chainSource.map { $0 + 1 }.mapResult { $0 }.recover { _ in 0 }
    chained.cancel()
    XCTAssertTrue(chainSource.isCanceled)
  }

  func testMapResult() {
    let source = CoPromise<Int>()
    let mapped = source.mapResult { result -> Result<String, any Error> in
      switch result {
      case .success(let value): return .success("v\(value)")
      case .failure: return .success("recovered")
      }
    }
    source.fail(TestError())
    XCTAssertEqual(try mapped.result?.get(), "recovered")

    let ok = CoFuture<Int>(result: .success(1)).mapResult { $0.map { $0 + 1 } }
    XCTAssertEqual(try ok.result?.get(), 2)

    let canceled = CoPromise<Int>()
    let seen = Box<Bool?>(nil)
    let observed = canceled.mapResult { result -> Result<Int, any Error> in
      if case .failure(let error) = result { seen.value = isFutureError(error, .canceled) }
      return result
    }
    canceled.cancel()
    XCTAssertEqual(seen.value, true)
    XCTAssertTrue(observed.isCanceled)
  }

  func testRecover() {
    let failing = CoPromise<Int>()
    let recovered = failing.recover { _ in 9 }
    failing.fail(TestError())
    XCTAssertEqual(try recovered.result?.get(), 9)

    let passing = CoFuture<Int>(result: .success(1)).recover { _ in 9 }
    XCTAssertEqual(try passing.result?.get(), 1)

    let rethrowing = CoFuture<Int>(result: .failure(TestError(1))).recover { _ in throw TestError(2)
    }
    XCTAssertThrowsError(try rethrowing.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(2))
    }

    let canceled = CoPromise<Int>()
    let recoveredFromCancel = canceled.recover { error in isFutureError(error, .canceled) ? -1 : 0 }
    canceled.cancel()
    XCTAssertEqual(try recoveredFromCancel.result?.get(), -1)
  }

  // MARK: flatMap / flatMapError / flatMapResult

  func testFlatMap() {
    let source = CoPromise<Int>()
    let inner = CoPromise<String>()
    let flat = source.flatMap { value -> CoFuture<String> in
      XCTAssertEqual(value, 1)
      return inner
    }
    source.success(1)
    XCTAssertNil(flat.result)
    inner.success("one")
    XCTAssertEqual(try flat.result?.get(), "one")

    let failing = CoPromise<Int>()
    let called = Box(false)
    let flatFailure = failing.flatMap { _ -> CoFuture<Int> in
      called.value = true
      return CoFuture(result: .success(0))
    }
    failing.fail(TestError(7))
    XCTAssertFalse(called.value)
    XCTAssertThrowsError(try flatFailure.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(7))
    }

    let innerFailure = CoFuture<Int>(result: .success(1)).flatMap { _ in
      CoFuture<Int>(result: .failure(TestError(8)))
    }
    XCTAssertThrowsError(try innerFailure.result?.get()) {
      XCTAssertEqual($0 as? TestError, TestError(8))
    }
  }

  func testFlatMapCancelCancelsParentAndInner() {
    let source = CoPromise<Int>()
    let flatBeforeParent = source.flatMap { _ in CoPromise<Int>() }
    flatBeforeParent.cancel()
    XCTAssertTrue(source.isCanceled)

    let ready = CoPromise<Int>()
    let inner = CoPromise<Int>()
    let flat = ready.flatMap { _ in inner }
    ready.success(1)
    flat.cancel()
    XCTAssertTrue(flat.isCanceled)
    XCTAssertTrue(inner.isCanceled)

    let canceledParent = CoPromise<Int>()
    let flatOfCanceled = canceledParent.flatMap { CoFuture(result: .success($0)) }
    canceledParent.cancel()
    XCTAssertTrue(flatOfCanceled.isCanceled)
  }

  func testFlatMapError() {
    let failing = CoPromise<Int>()
    let recovered = failing.flatMapError { error in
      CoFuture(result: .success((error as? TestError)?.id ?? -1))
    }
    failing.fail(TestError(4))
    XCTAssertEqual(try recovered.result?.get(), 4)

    let called = Box(false)
    let passing = CoFuture<Int>(result: .success(2)).flatMapError { _ in
      called.value = true
      return CoFuture(result: .success(0))
    }
    XCTAssertEqual(try passing.result?.get(), 2)
    XCTAssertFalse(called.value)

    let canceled = CoPromise<Int>()
    let afterCancel = canceled.flatMapError { _ in CoFuture(result: .success(5)) }
    canceled.cancel()
    XCTAssertEqual(try afterCancel.result?.get(), 5)
  }

  func testFlatMapResult() {
    let source = CoPromise<Int>()
    let inner = CoPromise<String>()
    let flat = source.flatMapResult { result -> CoFuture<String> in
      XCTAssertEqual(try? result.get(), 3)
      return inner
    }
    source.success(3)
    inner.fail(TestError(9))
    XCTAssertThrowsError(try flat.result?.get()) { XCTAssertEqual($0 as? TestError, TestError(9)) }

    let fromFailure = CoFuture<Int>(result: .failure(TestError())).flatMapResult { result in
      CoFuture<Bool>(result: .success((try? result.get()) == nil))
    }
    XCTAssertEqual(try fromFailure.result?.get(), true)
  }

  // MARK: Memory

  func testDerivedFuturesAreReleasedOnceComplete() {
    weak var weakMapped: CoFuture<Int>?
    weak var weakFlat: CoFuture<Int>?
    let source = CoPromise<Int>()
    do {
      let mapped = source.map { $0 + 1 }
      let flat = source.flatMap { CoFuture(result: .success($0)) }
      weakMapped = mapped
      weakFlat = flat
    }
    XCTAssertNotNil(weakMapped, "kept alive by the pending source")
    XCTAssertNotNil(weakFlat)
    source.success(1)
    XCTAssertNil(weakMapped)
    XCTAssertNil(weakFlat)
  }

  func testFutureInScopeIsCanceledWithIt() {
    let scope = CoScope()
    let promise = CoPromise<Int>().added(to: scope)
    XCTAssertFalse(scope.isEmpty)
    scope.cancel()
    XCTAssertTrue(promise.isCanceled)
    let late = CoPromise<Int>().added(to: scope)
    XCTAssertTrue(late.isCanceled)
  }
}
