import Covenant
import CovenantTesting
import Dispatch
import XCTest

/// An observer that resolves a future and then waits for something that resolution completes
/// (a `map` of it, a conversion of it) gets it: the resolutions the observer queued in its
/// stack's `ResolutionDrain` are told before the stack waits, by suspending its coroutine or by
/// blocking its thread, as the recursive notification did. The 5-second limits only keep a
/// failure from hanging the run.
final class WaitInsideObserverTests: XCTestCase {
  /// In a coroutine that resolves a future itself: its observer resolves `source`, then awaits
  /// `source.map`, whose resolution is queued in the drain of the coroutine's own stack.
  func testCoroutineAwaitingAMapOfAFutureItsObserverResolved() {
    let queue = DispatchQueue(label: "wait-inside-observer")
    let outer = CoPromise<Int>()
    let source = CoPromise<Int>()
    let mapped = source.map { $0 + 1 }
    let awaited = Box<Int?>(nil)
    outer.whenComplete { _ in
      source.success(1)
      awaited.value = try? mapped.await(timeout: .seconds(5))
    }
    let coroutine = queue.coroutineFuture { outer.success(0) }
    XCTAssertNoThrow(try coroutine.join())
    XCTAssertEqual(awaited.value, 2)
  }

  /// The same through conversions (`Promise(future)`, `CoFuture(promise)`: adoptions queued in
  /// the drain), awaited without a timeout.
  func testCoroutineAwaitingAConversionOfAPromiseItsObserverFulfilled() {
    let queue = DispatchQueue(label: "wait-inside-observer")
    let promise = Promise<Int>()
    let future = CoFuture(promise).map { $0 * 10 }
    let converted = Promise(future)
    let awaited = Box<Int?>(nil)
    XCTAssertTrue(
      observerReturns(startedBy: { queue.startCoroutine(task: $0) }) {
        promise.fulfill(4)
        awaited.value = try? converted.await()
      })
    XCTAssertEqual(awaited.value, 40)
    XCTAssertTrue(waitForPromises(timeout: 2))
  }

  /// Observers queued before the waiting one keep their place: what the waiting observer queued
  /// runs first (as a nested resolution did), the rest after it returns, in order.
  func testOrderWhenAnObserverAwaitsWhatItQueued() {
    let queue = DispatchQueue(label: "wait-inside-observer")
    let outer = CoPromise<Int>()
    let first = CoPromise<Int>()
    let second = CoPromise<Int>()
    let log = Recorder<String>()
    first.whenComplete { _ in log.append("first: observer") }
    second.whenComplete { _ in log.append("second: observer") }
    let mapped = second.map { $0 + 1 }
    outer.whenComplete { _ in
      first.success(1)
      second.success(2)
      log.append("awaits")
      let value = try? mapped.await(timeout: .seconds(5))
      log.append("awaited \(value.map(String.init) ?? "nothing")")
    }
    outer.whenComplete { _ in log.append("outer: observer 2") }
    let coroutine = queue.coroutineFuture { outer.success(0) }
    XCTAssertNoThrow(try coroutine.join())
    XCTAssertEqual(
      log.elements,
      ["awaits", "first: observer", "second: observer", "awaited 3", "outer: observer 2"])
  }

  /// An observer run by that early telling may await too, something that is resolved later.
  func testAnObserverToldBeforeTheWaitMayItselfSuspend() {
    let queue = DispatchQueue(label: "wait-inside-observer")
    let outer = CoPromise<Int>()
    let source = CoPromise<Int>()
    let gate = CoPromise<Int>()
    let mapped = source.map { $0 + 1 }
    let log = Recorder<String>()
    source.whenComplete { _ in
      log.append("source: observer waits")
      let value = try? gate.await(timeout: .seconds(5))
      log.append("source: observer got \(value ?? -1)")
    }
    outer.whenComplete { _ in
      source.success(1)
      let value = try? mapped.await(timeout: .seconds(5))
      log.append("outer: observer got \(value ?? -1)")
    }
    let coroutine = queue.coroutineFuture { outer.success(0) }
    queue.sync {}  // suspended in the source's observer now
    XCTAssertEqual(log.elements, ["source: observer waits"])
    gate.success(7)
    XCTAssertNoThrow(try coroutine.join())
    XCTAssertEqual(
      log.elements, ["source: observer waits", "source: observer got 7", "outer: observer got 2"])
  }

  /// On a thread: an observer blocks in `awaitPromise` for a promise adopting what it fulfilled.
  func testThreadBlockingInAwaitPromiseInsideAnObserver() {
    let promise = Promise<Int>()
    let converted = Promise(CoFuture(promise).map { $0 + 1 })
    let awaited = Box<Int?>(nil)
    XCTAssertTrue(
      observerReturns(startedBy: { Thread.detachNewThread($0) }) {
        promise.fulfill(1)
        awaited.value = try? awaitPromise(converted)
      })
    XCTAssertEqual(awaited.value, 2)
    XCTAssertTrue(waitForPromises(timeout: 2))
  }

  /// On a thread: an observer blocks in `join()` of a future its resolution completes.
  func testThreadBlockingInJoinInsideAnObserver() {
    let source = CoPromise<Int>()
    let mapped = source.map { $0 + 1 }
    XCTAssertTrue(
      observerReturns(startedBy: { Thread.detachNewThread($0) }) {
        source.success(1)
        try? mapped.join()
      })
    XCTAssertEqual(try? mapped.result?.get(), 2)
  }

  /// Runs `observer` as an observer of a future that `start` resolves (from a coroutine, or a
  /// thread, it starts with the closure it is given); true once the observer has returned, false
  /// if it has not within 5 seconds.
  private func observerReturns(
    startedBy start: (@escaping @Sendable () -> Void) -> Void,
    _ observer: @escaping @Sendable () -> Void
  ) -> Bool {
    let outer = CoPromise<Int>()
    let done = DispatchSemaphore(value: 0)
    outer.whenComplete { _ in
      observer()
      done.signal()
    }
    start { outer.success(0) }
    return done.wait(timeout: .now() + 5) == .success
  }
}
