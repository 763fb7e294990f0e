import Covenant
import CovenantTesting
import Dispatch
import XCTest

/// An await that ends without its promise (cancelled, timed out) takes its waiter out of the
/// promise's chain in constant time, whatever its place there: many coroutines awaiting one
/// promise and given up on in any order cost time linear in their number, and leave nothing in
/// the cell.
final class AwaiterRemovalTests: XCTestCase {
  /// The reviewer's case: awaiters cancelled in reverse order, the worst one for a chain
  /// walked from its head (100,000 of them took minutes then).
  func testAwaitersCancelledInReverseOrderLeaveTheCell() throws {
    let count = TestScale.liveCoroutines(100_000)
    let promise = Promise<Int>()
    let queue = DispatchQueue(label: "awaiters")
    let awaiters = (0..<count).map { _ in queue.coroutineFuture { try promise.await() } }
    queue.sync {}  // every coroutine has run to its await
    XCTAssertEqual(promise.cell.registeredReactionCount, count)
    for awaiter in awaiters.reversed() { awaiter.cancel() }
    for awaiter in awaiters { try awaiter.join() }
    XCTAssertEqual(promise.cell.registeredReactionCount, 0)
    promise.fulfill(1)
    XCTAssertEqual(promise.value, 1)
    for awaiter in awaiters { XCTAssertThrowsError(try awaiter.result?.get()) }
  }

  /// Timed awaits that time out, the last registered first (deadlines in reverse order, on
  /// virtual time).
  func testAwaitersTimingOutInReverseOrderLeaveTheCell() throws {
    let count = TestScale.liveCoroutines(20_000)
    let promise = Promise<Int>()
    let scheduler = TestScheduler()
    let timedOut = HitCounter()
    for index in 0..<count {
      scheduler.startCoroutine {
        do {
          _ = try promise.await(timeout: .nanoseconds(count - index))
        } catch CoFutureError.timeout {
          timedOut.increment()
        }
      }
    }
    scheduler.run()
    XCTAssertEqual(promise.cell.registeredReactionCount, count)
    scheduler.advance(by: .nanoseconds(count))
    XCTAssertEqual(timedOut.value, count)
    XCTAssertEqual(promise.cell.registeredReactionCount, 0)
    promise.fulfill(1)
    XCTAssertEqual(promise.value, 1)
  }

  /// Awaiters cancelled through their scope.
  func testAwaitersCancelledThroughTheirScopeLeaveTheCell() throws {
    let count = TestScale.liveCoroutines(20_000)
    let promise = Promise<Int>()
    let queue = DispatchQueue(label: "awaiters")
    let scope = CoScope()
    for _ in 0..<count { queue.startCoroutine(in: scope) { _ = try promise.await() } }
    queue.sync {}
    XCTAssertEqual(promise.cell.registeredReactionCount, count)
    try scope.cancelAndJoin()
    XCTAssertEqual(promise.cell.registeredReactionCount, 0)
    promise.fulfill(1)
    XCTAssertEqual(promise.value, 1)
  }

  /// Given-up waiters that stay linked for a while (one in the middle, one at the tail with
  /// reactions appended after it) are unlinked by the next compaction; the other reactions keep
  /// their order.
  func testGivenUpWaitersLeaveByCompactionAndTheOthersKeepTheirOrder() throws {
    let future = CoPromise<Int>()
    let queue = DispatchQueue(label: "awaiters")
    let log = Recorder<Int>()
    func awaiter() -> CoFuture<Int> {
      let awaiter = queue.coroutineFuture { try future.await() }
      queue.sync {}  // registered
      return awaiter
    }
    func giveUp(_ awaiter: CoFuture<Int>) throws {
      awaiter.cancel()
      try awaiter.join()
    }
    future.whenComplete { _ in log.append(0) }
    let first = awaiter()
    let second = awaiter()
    let third = awaiter()
    XCTAssertEqual(future.cell.registeredReactionCount, 4)
    try giveUp(first)  // the chain's first give-up compacts it: 3 left
    XCTAssertEqual(future.cell.registeredReactionCount, 3)
    try giveUp(third)  // the tail: marked, left linked
    XCTAssertEqual(future.cell.registeredReactionCount, 3)
    future.whenComplete { _ in log.append(1) }  // appended after the given-up tail
    let fourth = awaiter()
    XCTAssertEqual(future.cell.registeredReactionCount, 5)
    // Two give-ups, more than half of 3: the compaction takes this one and the old tail.
    try giveUp(second)
    XCTAssertEqual(future.cell.registeredReactionCount, 3)
    try giveUp(fourth)  // the tail again: marked, left linked
    XCTAssertEqual(future.cell.registeredReactionCount, 3)
    let fifth = awaiter()
    future.whenComplete { _ in log.append(2) }
    XCTAssertEqual(future.cell.registeredReactionCount, 5)
    future.success(7)
    try fifth.join()
    XCTAssertEqual(try fifth.result?.get(), 7)
    XCTAssertEqual(log.elements, [0, 1, 2])
    XCTAssertEqual(future.cell.registeredReactionCount, 0)
  }

  /// When every waiter of a chain gives up, in any order, the chain ends empty: the head is
  /// never a given-up waiter.
  func testAChainWhoseWaitersAllGaveUpIsEmpty() throws {
    let queue = DispatchQueue(label: "awaiters")
    for order in [
      [0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 4, 0, 5, 1, 3], [1, 3, 5, 0, 2, 4],
    ] {
      let future = CoPromise<Int>()
      let awaiters = (0..<6).map { _ in queue.coroutineFuture { try future.await() } }
      queue.sync {}
      XCTAssertEqual(future.cell.registeredReactionCount, 6)
      for index in order {
        awaiters[index].cancel()
        try awaiters[index].join()
      }
      XCTAssertEqual(future.cell.registeredReactionCount, 0, "order \(order)")
    }
  }

  /// A coroutine whose timed-out await left it linked in a long chain awaits on (another
  /// promise) at once, and the pending promise it gave up on may then be dropped: dropping
  /// tells it its link is free.
  func testAWaiterLeftLinkedAwaitsOnAndThePromiseMayBeDropped() throws {
    let scheduler = TestScheduler()
    let queue = DispatchQueue(label: "blocks")
    var promise: Promise<Int>? = Promise<Int>()
    weak let dropped = promise
    let other = Promise<Int>()
    let log = Recorder<String>()
    for _ in 0..<3 { promise!.then(on: queue) { _ in log.append("then") } }
    for (index, timeout) in [1, 2].enumerated() {
      let awaited = UnsafeTransfer(promise!)
      scheduler.startCoroutine {
        do {
          _ = try awaited.value.await(timeout: .nanoseconds(timeout))
        } catch CoFutureError.timeout {
          log.append("\(index): timed out")
        }
        log.append("\(index): got \(try other.await())")
      }
    }
    scheduler.run()
    XCTAssertEqual(promise!.cell.registeredReactionCount, 5)
    scheduler.advance(by: .nanoseconds(1))  // the chain's first give-up compacts it
    XCTAssertEqual(promise!.cell.registeredReactionCount, 4)
    scheduler.advance(by: .nanoseconds(1))  // one of four: left linked, marked
    XCTAssertEqual(promise!.cell.registeredReactionCount, 4)
    other.fulfill(5)
    scheduler.run()
    XCTAssertEqual(
      log.elements, ["0: timed out", "1: timed out", "0: got 5", "1: got 5"])
    promise = nil
    XCTAssertNil(dropped)
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertFalse(log.elements.contains("then"))
  }
}
