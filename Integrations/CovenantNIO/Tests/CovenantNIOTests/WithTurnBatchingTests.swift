import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// `withTurn` batches: a burst of wake-ups made in NIO callbacks resumes each coroutine once
/// (the issue measured 1,000 offers → 1,000 wake-ups before).
final class WithTurnBatchingTests: XCTestCase {
  var group: MultiThreadedEventLoopGroup!

  override func setUp() {
    group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  }

  override func tearDown() {
    try? group.syncShutdownGracefully()
  }

  /// 1,000 offers to a `CoChannel`, each in its own `withTurn` (as 1,000 `channelRead`s of one
  /// socket read would make them), all in one loop task: the receiving coroutine resumes once,
  /// then takes the rest without suspending; and the burst costs one `execute`.
  func testBurstOfWakeUpsResumesTheReceiverOnce() throws {
    let loop = group.next()
    let scheduler = loop.coroutineScheduler
    let inbox = CoChannel<Int>()
    let resumes = Shared(0)
    let burst = 1_000
    let ready = CoPromise<Void>()
    let received = loop.coroutineFuture { () -> Int in
      var total = 0
      ready.success(())
      while total < burst {
        if inbox.poll() != nil {
          total += 1
          continue
        }
        _ = try inbox.awaitReceive()  // suspends: count the wake-up
        resumes.modify { $0 += 1 }
        total += 1
      }
      return total
    }
    _ = value(of: ready)
    // Let the receiver reach its `awaitReceive`.
    try loop.submit {}.wait()
    let executesBefore = scheduler.executeCalls
    try loop.submit {
      for value in 0..<burst {
        scheduler.withTurn { _ = inbox.offer(value) }
      }
    }.wait()
    XCTAssertEqual(value(of: received), burst)
    XCTAssertEqual(resumes.value, 1, "one wake-up for the whole burst")
    XCTAssertEqual(scheduler.executeCalls - executesBefore, 1, "one execute for the burst")
  }

  /// Without `withTurn` the same burst also resumes the receiver once, but through the
  /// scheduler's inbox; with it, wake-ups of separate loop tasks cost one `execute` each.
  func testWakeUpsInSeparateLoopTasksCostOneExecuteEach() throws {
    let loop = group.next()
    let scheduler = loop.coroutineScheduler
    let rounds = 20
    let total = loop.coroutineFuture { () -> Int in
      var sum = 0
      for _ in 0..<rounds {
        let promise = Promise<Int>.pending()
        loop.scheduleTask(in: .microseconds(10)) { scheduler.withTurn { promise.fulfill(1) } }
        sum += try promise.await()
      }
      return sum
    }
    XCTAssertEqual(value(of: total), rounds)
    XCTAssertEqual(scheduler.executeCalls, 1 + rounds)
  }
}
