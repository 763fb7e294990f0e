import CovenantNIO
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import XCTest

/// What happens to coroutines when their loop shuts down: a clear error, no hang, no leak.
final class ShutdownTests: XCTestCase {
  func testSuspendedCoroutinesFailWithShutdownAndAreReleased() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let count = 200
    let neverFulfilled = Promise<Int>.pending()
    // A NIO promise of a loop that outlives the group under test.
    let otherGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? otherGroup.syncShutdownGracefully() }
    let neverCompletedNIO = otherGroup.next().makePromise(of: Int.self)
    let sawCancel = NIOLockedValueBox(0)
    var futures: [CoFuture<Int>] = []
    var watchers: [() -> Tracked?] = []
    for index in 0..<count {
      let loop = group.next()
      let tracked = Tracked()
      weak let weakTracked = tracked
      watchers.append { weakTracked }
      futures.append(
        loop.coroutineFuture { () -> Int in
          withExtendedLifetime(tracked) {}
          do {
            switch index % 3 {
            case 0: return try neverFulfilled.await()  // a Covenant promise nobody fulfils
            case 1: return try loop.scheduleTask(in: .hours(1)) { 0 }.futureResult.await()
            default: return try CoFuture(neverCompletedNIO.futureResult).await()
            }
          } catch {
            sawCancel.withLockedValue { $0 += 1 }
            throw error
          }
        })
    }
    // Wait until every coroutine has run up to its await.
    for loop in group.makeIterator() { try loop.submit {}.wait() }
    XCTAssertEqual(futures.filter { $0.result != nil }.count, 0)

    try group.syncShutdownGracefully()

    for future in futures {
      XCTAssertThrowsError(try outcome(of: future).get()) { error in
        XCTAssertEqual(error as? EventLoopError, .shutdown, "\(error)")
      }
    }
    XCTAssertEqual(sawCancel.withLockedValue { $0 }, count)
    // Every coroutine finished and released what it captured (its stack went with it).
    XCTAssertEqual(watchers.compactMap { $0() }.count, 0)
    neverCompletedNIO.fail(TestError())  // keep NIO's leak check quiet
  }

  func testCoroutineStartedAfterTheLoopStopsIsNotLostSilently() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let scheduler = loop.coroutineScheduler
    XCTAssertFalse(scheduler.isShutDown)
    try group.syncShutdownGracefully()
    XCTAssertTrue(scheduler.isShutDown)
    // A coroutine started on the scheduler of a stopped loop never runs; its future fails.
    let future = scheduler.coroutineFuture { () -> Int in
      try Coroutine.yield()
      return 1
    }
    // Work handed to the scheduler directly still runs (on its fallback queue), not dropped.
    let ranAfterShutdown = CoPromise<Bool>()
    scheduler.scheduleTask { ranAfterShutdown.success(true) }
    XCTAssertEqual(value(of: ranAfterShutdown), true)
    let result = outcome(of: future)
    XCTAssertThrowsError(try result.get()) { error in
      XCTAssertEqual(error as? EventLoopError, .shutdown, "\(error)")
    }
  }

  func testStartingOnALoopThatHasShutDownFailsClearly() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    XCTAssertEqual(value(of: loop.coroutineFuture { 1 }), 1)
    try group.syncShutdownGracefully()
    // A new lookup after the shutdown: the registry remembers the loop is dead.
    XCTAssertTrue(loop.coroutineScheduler.isShutDown)
    let ran = NIOLockedValueBox(false)
    let future = loop.coroutineFuture { () -> Int in
      ran.withLockedValue { $0 = true }
      return 2
    }
    XCTAssertThrowsError(try outcome(of: future).get()) { error in
      XCTAssertEqual(error as? EventLoopError, .shutdown, "\(error)")
    }
    XCTAssertFalse(ran.withLockedValue { $0 })
  }

  /// A coroutine started through Covenant's generic API (`CoroutineScheduler.coroutineFuture`)
  /// is not tracked by the loop's scheduler, so the shutdown does not cancel it. NIO fails a
  /// shut-down loop's scheduled tasks instead of running them: the scheduler's timers must then
  /// fire at once, or such a coroutine's delay or timed wait would never end. They fire on the
  /// loop's thread during its final drain: from another thread the wake-up would be an
  /// `execute` the closed loop refuses (NIO prints an error, and crashes in its strict mode).
  func testPendingTimersOfUntrackedCoroutinesFireWhenTheLoopShutsDown() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let scheduler: any CoroutineScheduler = loop.coroutineScheduler
    let delayed = scheduler.coroutineFuture { () -> String in
      try Coroutine.delay(.seconds(3600))
      // A timer armed while the loop drains its last work ends at once too.
      try Coroutine.delay(.seconds(3600))
      return "delays ended on the loop's thread: \(loop.inEventLoop)"
    }
    let timed = scheduler.coroutineFuture { () -> String in
      do {
        return "answered \(try CoPromise<Int>().await(timeout: .seconds(3600)))"
      } catch {
        return "\(error)"
      }
    }
    try loop.submit {}.wait()  // both coroutines have run up to their waits
    XCTAssertNil(delayed.result)
    XCTAssertNil(timed.result)

    try group.syncShutdownGracefully()

    XCTAssertEqual(value(of: delayed), "delays ended on the loop's thread: true")
    XCTAssertEqual(value(of: timed), "\(CoFutureError.timeout)")
  }
}
