import CCoroutineContext
import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

/// The order in which observers run when an observer completes another future (Architecture.md,
/// "The promise core: cells and reactions"; the Futures article): the nested future's
/// synchronous observers run right after the observer that completed it returns, before the
/// next observer of the outer future; its state is visible at once; blocks chained with
/// `then` are dispatched at once, in registration order. And where a coroutine or generator
/// suspends in the middle of telling observers.
final class ResolutionOrderTests: XCTestCase {
  func testNestedObserversRunAfterTheObserverThatCompletedTheirFuture() {
    let outer = CoPromise<Int>()
    let first = CoPromise<Int>()
    let second = CoPromise<Int>()
    let log = Recorder<String>()
    first.whenComplete { _ in log.append("first: observer 1") }
    second.whenComplete { _ in log.append("second: observer 1") }
    first.whenComplete { _ in log.append("first: observer 2") }
    first.whenComplete { _ in
      log.append("first: observer 3 completes a fourth future")
      let fourth = CoPromise<Int>()
      fourth.whenComplete { _ in log.append("fourth: observer") }
      fourth.success(4)
    }
    outer.whenComplete { _ in
      log.append("outer: observer 1 starts")
      first.success(1)
      // Complete at once: its state is readable, and an observer added now runs now.
      XCTAssertEqual(try? first.result?.get(), 1)
      first.whenComplete { _ in log.append("first: observer added after completion") }
      second.success(2)
      log.append("outer: observer 1 ends")
    }
    outer.whenComplete { _ in log.append("outer: observer 2") }
    outer.success(0)
    XCTAssertEqual(
      log.elements,
      [
        "outer: observer 1 starts",
        "first: observer added after completion",
        "outer: observer 1 ends",
        "first: observer 1",
        "first: observer 2",
        "first: observer 3 completes a fourth future",
        "fourth: observer",
        "second: observer 1",
        "outer: observer 2",
      ])
  }

  /// `then` blocks of a promise resolved inside an observer are dispatched at once, in
  /// registration order, before a block chained after the resolution.
  func testBlocksOfAPromiseResolvedInsideAnObserverKeepRegistrationOrder() {
    let queue = DispatchQueue(label: "order")
    let source = CoPromise<Int>()
    let promise = Promise<Int>()
    let log = Recorder<String>()
    let gate = DispatchSemaphore(value: 0)
    queue.async { gate.wait() }  // holds the queue until everything is dispatched
    promise.then(on: queue) { _ in log.append("then 1") }
    CoFuture(promise).whenComplete { _ in log.append("observer") }
    promise.then(on: queue) { _ in log.append("then 2") }
    source.whenComplete { result in
      promise.resolve(result)
      promise.then(on: queue) { _ in log.append("then 3, chained after the resolution") }
    }
    source.success(1)
    XCTAssertEqual(log.elements, ["observer"])
    gate.signal()
    queue.sync {}
    XCTAssertEqual(
      log.elements, ["observer", "then 1", "then 2", "then 3, chained after the resolution"])
    XCTAssertTrue(waitForPromises(timeout: 2))
  }

  /// A coroutine that suspends inside an observer, in the middle of telling a future's
  /// observers, leaves nothing of that on the thread: a resolution there runs its observers at
  /// once. The coroutine tells the rest when it continues.
  func testCoroutineSuspendingInsideAnObserverLeavesTheThreadFree() {
    let gate = CoPromise<Void>()
    let source = CoPromise<Int>()
    let log = Recorder<String>()
    source.whenComplete { _ in
      log.append("source: observer 1 suspends")
      _ = try? gate.await()
      log.append("source: observer 1 continues")
    }
    source.whenComplete { _ in log.append("source: observer 2") }
    // Runs at once on this thread (an immediate coroutine) until it suspends in observer 1.
    let coroutine = CoFuture<Void> { source.success(1) }
    XCTAssertEqual(log.elements, ["source: observer 1 suspends"])

    let other = CoPromise<Int>()
    other.whenComplete { _ in log.append("other: observer") }
    other.success(2)
    XCTAssertEqual(log.elements, ["source: observer 1 suspends", "other: observer"])

    gate.success(())  // resumes the coroutine here, inside this resolution's own observers
    XCTAssertEqual(
      log.elements,
      [
        "source: observer 1 suspends", "other: observer", "source: observer 1 continues",
        "source: observer 2",
      ])
    XCTAssertNotNil(coroutine.result)

    // And the thread is free again afterwards.
    let last = CoPromise<Int>()
    last.whenComplete { _ in log.append("last: observer") }
    last.success(3)
    XCTAssertEqual(log.elements.last, "last: observer")
  }

  /// The same when the coroutine continues on another thread: it finishes telling there.
  func testCoroutineResumedElsewhereFinishesTellingThere() {
    let gate = CoPromise<Void>()
    let source = CoPromise<Int>()
    let done = DispatchSemaphore(value: 0)
    let log = Recorder<String>()
    source.whenComplete { _ in
      log.append("observer 1 suspends")
      _ = try? gate.await()
      log.append("observer 1 continues")
    }
    source.whenComplete { _ in
      log.append("observer 2")
      done.signal()
    }
    let queue = DispatchQueue(label: "suspending")
    queue.startCoroutine { source.success(1) }
    queue.sync {}  // the coroutine is suspended in observer 1 now
    XCTAssertEqual(log.elements, ["observer 1 suspends"])
    // On the queue's thread, a resolution's observers run at once.
    queue.sync {
      let other = CoPromise<Int>()
      other.whenComplete { _ in log.append("other: observer") }
      other.success(2)
      XCTAssertEqual(log.elements.last, "other: observer")
    }
    DispatchQueue.global().async { gate.success(()) }
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(
      log.elements,
      ["observer 1 suspends", "other: observer", "observer 1 continues", "observer 2"])
  }

  /// A generator whose body yields from inside an observer: the consumer's thread is free while
  /// the body is parked, and the body finishes telling when it is resumed.
  func testGeneratorYieldingInsideAnObserver() {
    let log = Recorder<String>()
    let generator = Generator<Int> { yield in
      let source = CoPromise<Int>()
      let parked = UnsafeTransfer(yield)
      source.whenComplete { _ in
        log.append("observer 1 yields")
        try? parked.value(1)
        log.append("observer 1 continues")
      }
      source.whenComplete { _ in log.append("observer 2") }
      source.success(0)
    }
    XCTAssertEqual(generator.next(), 1)
    let other = CoPromise<Int>()
    other.whenComplete { _ in log.append("other: observer") }
    other.success(2)
    XCTAssertEqual(log.elements, ["observer 1 yields", "other: observer"])
    XCTAssertNil(generator.next())
    XCTAssertEqual(
      log.elements, ["observer 1 yields", "other: observer", "observer 1 continues", "observer 2"])
  }

  /// While observers queued by a drain wait, the drain counts in `DispatchGroup.promises`:
  /// `waitForPromises` does not return between a promise's own observers and what they started.
  func testQueuedObserversKeepThePromiseGroupBusy() {
    XCTAssertTrue(waitForPromises(timeout: 2))
    let outer = CoPromise<Int>()
    let inner = CoPromise<Int>()
    let groupWasBusy = Box(false)
    inner.whenComplete { _ in
      groupWasBusy.value = DispatchGroup.promises.wait(timeout: .now()) == .timedOut
    }
    inner.whenComplete { _ in }
    outer.whenComplete { _ in inner.success(1) }
    outer.success(0)
    XCTAssertTrue(groupWasBusy.value)
    XCTAssertTrue(waitForPromises(timeout: 2))
  }

  /// Dropping the head of a long unresolved chain releases the whole chain from one loop, not
  /// from nested deinitializers.
  func testDroppingALongUnresolvedChainReleasesItWithoutRecursion() {
    let depth = DeepChain.depth
    let top = WeakReference<Promise<Int>>()
    let futureTop = WeakReference<CoFuture<Int>>()
    let queue = DispatchQueue(label: "unresolved")
    let peak = StackProbe.peakStackUse {
      var head: Promise<Int>? = Promise<Int>()
      var futureHead: CoPromise<Int>? = CoPromise<Int>()
      do {
        var last = head!
        for _ in 0..<depth { last = last.then(on: queue) { $0 } }
        top.object = last
        var lastFuture: CoFuture<Int> = futureHead!
        for _ in 0..<depth { lastFuture = lastFuture.map { $0 } }
        futureTop.object = lastFuture
      }
      head = nil  // a pending promise: its chain is released
      futureHead = nil  // a pending future: its observers learn it was cancelled
    }
    XCTAssertNil(top.object)
    XCTAssertNil(futureTop.object)
    if let peak {
      print("deep-resolution: dropping unresolved chains depth \(depth): peak stack \(peak) bytes")
      XCTAssertLessThan(peak, 16_384)
    }
    XCTAssertTrue(waitForPromises(timeout: 2))
  }
}

/// A weak reference a `@Sendable` closure can set.
private final class WeakReference<Object: AnyObject>: @unchecked Sendable {
  weak var object: Object?
}
