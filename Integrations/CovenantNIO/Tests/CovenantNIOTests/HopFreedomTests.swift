import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// Counts `eventLoop.execute` calls made by the scheduler (its `executeCalls` counter) to
/// show which wake-ups are hop-free. Each test runs on its own fresh loop.
final class HopFreedomTests: XCTestCase {
  var group: MultiThreadedEventLoopGroup!
  var loop: (any EventLoop)!
  var scheduler: EventLoopCoroutineScheduler!

  override func setUp() {
    group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    loop = group.next()
    scheduler = loop.coroutineScheduler
  }

  override func tearDown() {
    try? group.syncShutdownGracefully()
  }

  /// Starting one coroutine from outside the loop: one `execute`.
  func testStartingFromOutsideCostsOneExecute() {
    let future = loop.coroutineFuture { 1 }
    XCTAssertEqual(value(of: future), 1)
    XCTAssertEqual(scheduler.executeCalls, 1)
  }

  /// Coroutines woken by other coroutines of the same loop (promise, CoFuture, channel):
  /// no `execute` beyond the one that started the work.
  func testCoroutineToCoroutineWakeUpsOnTheSameLoopAreHopFree() throws {
    let loop = self.loop!
    let rounds = 1_000
    let future = loop.coroutineFuture { () -> Int in
      let pings = CoChannel<Int>(capacity: 1)
      let pongs = CoChannel<Int>(capacity: 1)
      let echo = loop.coroutineFuture { () -> Int in
        var echoed = 0
        for value in pings.makeIterator() {
          try pongs.awaitSend(value)
          echoed += 1
        }
        return echoed
      }
      var sum = 0
      for round in 0..<rounds {
        try pings.awaitSend(round)
        sum += try pongs.awaitReceive()
        let promise = Promise<Int>.pending()
        loop.startCoroutine { promise.fulfill(1) }
        sum += try promise.await()
      }
      pings.close()
      return sum + (try echo.await()) * 0
    }
    XCTAssertEqual(value(of: future), (rounds - 1) * rounds / 2 + rounds)
    XCTAssertEqual(scheduler.executeCalls, 1, "only the first start should need an execute")
  }

  /// `EventLoopFuture.await()` completed by a NIO timer on the same loop: the timer's callback
  /// runs the coroutine in its own loop task, so no `execute` per await.
  func testAwaitingTimersOfTheSameLoopIsHopFree() {
    let loop = self.loop!
    let future = loop.coroutineFuture { () -> Int in
      var total = 0
      for index in 0..<200 {
        total += try loop.scheduleTask(in: .microseconds(10)) { index }.futureResult.await()
      }
      return total
    }
    XCTAssertEqual(value(of: future), 199 * 200 / 2)
    XCTAssertEqual(scheduler.executeCalls, 1)
  }

  /// A Covenant promise fulfilled by a bare NIO callback (outside any turn) costs one
  /// `execute` per wake-up; wrapped in `withTurn`, one per loop iteration (here each wake-up
  /// has its own: `WithTurnBatchingTests` shows a burst sharing one).
  func testPromiseFulfilledByABareTimerCostsAnExecuteUnlessInATurn() {
    let loop = self.loop!
    let scheduler = self.scheduler!
    let bare = loop.coroutineFuture { () -> Int in
      var total = 0
      for _ in 0..<50 {
        let promise = Promise<Int>.pending()
        loop.scheduleTask(in: .microseconds(10)) { promise.fulfill(1) }
        total += try promise.await()
      }
      return total
    }
    XCTAssertEqual(value(of: bare), 50)
    XCTAssertEqual(scheduler.executeCalls, 1 + 50)

    let inTurn = loop.coroutineFuture { () -> Int in
      var total = 0
      for _ in 0..<50 {
        let promise = Promise<Int>.pending()
        loop.scheduleTask(in: .microseconds(10)) { scheduler.withTurn { promise.fulfill(1) } }
        total += try promise.await()
      }
      return total
    }
    XCTAssertEqual(value(of: inTurn), 50)
    XCTAssertEqual(scheduler.executeCalls, 1 + 50 + 1 + 50)
  }

  /// Many wake-ups from another thread share one `execute` when they arrive before the loop
  /// drains its inbox (a batch), and never cost more than one each.
  func testWakeUpsFromOtherThreadsCostAtMostOneExecuteEach() {
    let loop = self.loop!
    let gate = CoPromise<Int>()
    let futures = (0..<100).map { _ in loop.coroutineFuture { try gate.await() } }
    // Block the loop so the 100 wake-ups pile up in the inbox before it drains.
    let release = DispatchSemaphore(value: 0)
    let blocked = DispatchSemaphore(value: 0)
    loop.execute {
      blocked.signal()
      release.wait()
    }
    blocked.wait()
    let before = scheduler.executeCalls
    gate.success(1)  // 100 wake-ups, from this (non-loop) thread
    release.signal()
    XCTAssertEqual(futures.reduce(0) { $0 + (value(of: $1) ?? 0) }, 100)
    XCTAssertEqual(scheduler.executeCalls - before, 1)
  }
}
