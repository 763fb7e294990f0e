import CovenantNIO
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import XCTest

/// Event loops as coroutine schedulers: identity, non-blocking awaits, hops, fairness, scale.
final class EventLoopSchedulerTests: XCTestCase {
  func testOneSchedulerPerLoop() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    defer { try? group.syncShutdownGracefully() }
    let loops = Array(group.makeIterator())
    XCTAssertTrue(loops[0].coroutineScheduler === loops[0].coroutineScheduler)
    XCTAssertFalse(loops[0].coroutineScheduler === loops[1].coroutineScheduler)
    XCTAssertTrue(loops[1].coroutineScheduler.eventLoop === loops[1])
  }

  func testCoroutineRunsOnTheLoopThreadAndStartsAsynchronously() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let loop = group.next()
    let started = try loop.submit { () -> (Bool, CoFuture<Bool>) in
      nonisolated(unsafe) var ran = false
      let future = loop.coroutineFuture { () -> Bool in
        ran = true
        return loop.inEventLoop
      }
      return (ran, future)
    }.wait()
    XCTAssertFalse(started.0, "the body must not run inside startCoroutine")
    XCTAssertEqual(value(of: started.1), true)
  }

  /// The loop keeps running other tasks while a coroutine on it is suspended: the task that
  /// releases the coroutine is itself a loop task, so a blocked loop would deadlock here.
  func testAwaitingOnTheLoopThreadNeverBlocksIt() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let loop = group.next()
    let gate = Promise<Int>.pending()
    let nioGate = loop.makePromise(of: Int.self)
    let future = loop.coroutineFuture { () -> Int in
      let a = try gate.await()  // a Covenant promise
      let b = try nioGate.futureResult.await()  // a NIO future
      return a + b
    }
    // Each of these is a separate task on the same (single-threaded) loop.
    let otherTaskRan = try loop.submit { () -> Bool in
      gate.fulfill(1)
      return true
    }.wait()
    XCTAssertTrue(otherTaskRan)
    try loop.submit { nioGate.succeed(2) }.wait()
    XCTAssertEqual(value(of: future), 3)
  }

  func testEventLoopAwaitHopsToTheLoopAndBack() {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let loop = group.next()
    let queue = DispatchQueue(label: "home")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 7)
    let future = queue.coroutineFuture { () -> [Bool] in
      let onLoop = try loop.await { loop.inEventLoop }
      let nestedOnLoop = try loop.await { try loop.await { loop.inEventLoop } }
      return [onLoop, nestedOnLoop, DispatchQueue.getSpecific(key: key) == 7]
    }
    XCTAssertEqual(value(of: future), [true, true, true])
  }

  func testTenThousandConcurrentCoroutinesOnTwoThreads() {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    defer { try? group.syncShutdownGracefully() }
    let count = 10_000
    let allStarted = NIOLockedValueBox(0)
    let gate = CoPromise<Int>()
    var futures: [CoFuture<Int>] = []
    futures.reserveCapacity(count)
    for index in 0..<count {
      let loop = group.next()
      futures.append(
        loop.coroutineFuture(stackSize: 64 * 1024) { () -> Int in
          allStarted.withLockedValue { $0 += 1 }
          let base = try gate.await()  // all 10,000 suspended here at the same time
          let timer = try loop.scheduleTask(in: .milliseconds(1)) { index }.futureResult.await()
          return base + timer
        })
    }
    // Release the gate only once every coroutine is suspended on it.
    let everyoneWaiting = CoPromise<Void>()
    DispatchQueue.global().startCoroutine {
      while allStarted.withLockedValue({ $0 }) < count { try Coroutine.delay(.milliseconds(5)) }
      everyoneWaiting.success()
    }
    _ = value(of: everyoneWaiting)
    XCTAssertEqual(futures.filter { $0.result != nil }.count, 0)
    gate.success(1)
    var sum = 0
    for future in futures { sum += value(of: future) ?? 0 }
    XCTAssertEqual(sum, count + (count - 1) * count / 2)
  }

  func testYieldingCoroutineDoesNotStarveOtherLoopTasks() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let loop = group.next()
    let otherTaskRan = NIOLockedValueBox(false)
    let future = loop.coroutineFuture { () -> Bool in
      // A plain NIO task queued behind us.
      loop.execute { otherTaskRan.withLockedValue { $0 = true } }
      for _ in 0..<(4 * EventLoopCoroutineScheduler.turnBudget) {
        if otherTaskRan.withLockedValue({ $0 }) { return true }
        try Coroutine.yield()
      }
      return otherTaskRan.withLockedValue { $0 }
    }
    XCTAssertEqual(value(of: future), true)
  }

  func testWorksOnAnEmbeddedEventLoop() throws {
    let loop = EmbeddedEventLoop()
    let nioPromise = loop.makePromise(of: Int.self)
    let future = loop.coroutineFuture { () -> Int in
      try nioPromise.futureResult.await() * 2
    }
    XCTAssertNil(future.result)
    loop.run()  // starts the coroutine; it suspends on the NIO future
    XCTAssertNil(future.result)
    nioPromise.succeed(21)  // resumes it inside a turn: completes in this call
    XCTAssertEqual(try future.result?.get(), 42)
    try loop.syncShutdownGracefully()
  }
}
