import CovenantNIO
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import XCTest

/// The loop's coroutines time out on the loop's own timers (`scheduleTask(in:)`): no thread hop,
/// no `execute`, the loop's clock (so an `EmbeddedEventLoop` gives virtual time), and a timer
/// that is cancelled as soon as the wait ends another way.
final class EventLoopTimerTests: XCTestCase {
  func testTimeoutFiresOnTheLoopWithoutAnExecute() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let loop = group.next()
    let scheduler = loop.coroutineScheduler
    let future = loop.coroutineFuture { () -> [String] in
      let executesBefore = scheduler.executeCalls
      var seen: [String] = []
      do {
        _ = try CoPromise<Int>().await(timeout: .milliseconds(20))
      } catch CoFutureError.timeout {
        seen.append("timed out")
      }
      try Coroutine.delay(.milliseconds(5))
      seen.append("on the loop: \(loop.inEventLoop)")
      seen.append("executes: \(scheduler.executeCalls - executesBefore)")
      return seen
    }
    XCTAssertEqual(value(of: future), ["timed out", "on the loop: true", "executes: 0"])
  }

  func testDelayAndTimeoutsFollowAnEmbeddedLoopsClock() throws {
    let loop = EmbeddedEventLoop()
    let log = NIOLockedValueBox<[String]>([])
    let reply = CoPromise<Int>()
    loop.startCoroutine {
      try Coroutine.delay(.seconds(10))
      log.withLockedValue { $0.append("delay done") }
      do { _ = try reply.await(timeout: .seconds(30)) } catch {
        log.withLockedValue { $0.append("\(error)") }
      }
    }
    loop.run()
    loop.advanceTime(by: .seconds(9))
    XCTAssertEqual(log.withLockedValue { $0 }, [])
    loop.advanceTime(by: .seconds(1))
    XCTAssertEqual(log.withLockedValue { $0 }, ["delay done"])
    loop.advanceTime(by: .seconds(30))
    XCTAssertEqual(log.withLockedValue { $0 }, ["delay done", "\(CoFutureError.timeout)"])
    try loop.syncShutdownGracefully()
  }

  /// A timed await answered in time cancels the loop's scheduled task, which lets go of the
  /// coroutine at once (not when the 30 s would have passed).
  func testTimedAwaitAnsweredInTimeReleasesTheCoroutine() throws {
    let loop = EmbeddedEventLoop()
    let reply = CoPromise<Int>()
    weak var weakToken: Tracked?
    let future: CoFuture<Int>
    do {
      let token = Tracked()
      weakToken = token
      future = loop.coroutineFuture { () -> Int in
        withExtendedLifetime(token) {}
        return try reply.await(timeout: .seconds(30))
      }
    }
    loop.run()
    XCTAssertNotNil(weakToken)
    reply.success(3)  // from outside the loop: the coroutine continues in the loop's next task
    loop.run()
    XCTAssertEqual(try future.result?.get(), 3)
    XCTAssertNil(weakToken, "the finished coroutine is freed before its timer's deadline")
    loop.advanceTime(by: .seconds(60))  // the cancelled timer does not run
    XCTAssertEqual(try future.result?.get(), 3)
    try loop.syncShutdownGracefully()
  }
}

extension EventLoopTimerTests {
  /// The scheduler's timer itself: cancelling it takes the task out of the loop's timers at
  /// once (releasing what it holds), and it never runs.
  func testCancellingALoopTimerReleasesItsTask() throws {
    let loop = EmbeddedEventLoop()
    let ran = NIOLockedValueBox(false)
    weak var weakPayload: Tracked?
    let timer: any CoroutineTimer
    do {
      let payload = Tracked()
      weakPayload = payload
      timer = loop.coroutineScheduler.scheduleTask(after: .seconds(30)) {
        withExtendedLifetime(payload) { ran.withLockedValue { $0 = true } }
      }
    }
    XCTAssertNotNil(weakPayload)
    timer.cancel()
    XCTAssertNil(weakPayload)
    loop.advanceTime(by: .seconds(60))
    XCTAssertFalse(ran.withLockedValue { $0 })
    let fired = loop.coroutineScheduler.scheduleTask(after: .seconds(1)) {
      ran.withLockedValue { $0 = true }
    }
    loop.advanceTime(by: .seconds(1))
    XCTAssertTrue(ran.withLockedValue { $0 })
    fired.cancel()  // after it ran: harmless
    try loop.syncShutdownGracefully()
  }
}
