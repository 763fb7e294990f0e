import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// `Coroutine.awaitAsync` from a coroutine on an event loop runs its task on the loop: hops
/// counted with the scheduler's `executeCalls` and `inEventLoop` checks.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class TaskExecutorTests: XCTestCase {
  var group: MultiThreadedEventLoopGroup!
  var loop: (any EventLoop)!

  override func setUp() {
    group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    loop = group.next()
  }

  override func tearDown() {
    try? group.syncShutdownGracefully()
  }

  func testAwaitAsyncOnALoopRunsOnTheLoopWithNoExecute() {
    let loop = self.loop!
    // Two items of the turn per call (the task's job, the coroutine's resume): 100 calls stay
    // within one turn's budget (`turnBudget`, 256), after which one `execute` is by design.
    let calls = 100
    let future = loop.coroutineFuture { () -> Int in
      var offLoop = 0
      for index in 0..<calls {
        let (value, onLoop) = try Coroutine.awaitAsync { () async -> (Int, Bool) in
          (index, loop.inEventLoop)
        }
        if !onLoop || !loop.inEventLoop { offLoop += 1 }
        XCTAssertEqual(value, index)
      }
      return offLoop
    }
    XCTAssertEqual(value(of: future), 0, "calls whose task ran off the loop")
    XCTAssertEqual(
      loop.coroutineScheduler.executeCalls, 1, "only the start: every task ran inside a turn")
  }

  func testATaskThatSuspendsComesBackToTheLoop() {
    let loop = self.loop!
    let future = loop.coroutineFuture { () -> [Bool] in
      try Coroutine.awaitAsync { () async throws -> [Bool] in
        let before = loop.inEventLoop
        try await Task.sleep(nanoseconds: 1_000_000)  // resumed by a timer elsewhere
        return [before, loop.inEventLoop]
      }
    }
    XCTAssertEqual(value(of: future), [true, true])
  }

  func testTheLoopsExecutorRunsATaskThere() async {
    let loop = self.loop!
    let onLoop = await Task(executorPreference: loop.coroutineScheduler.taskExecutor) {
      loop.inEventLoop
    }.value
    XCTAssertTrue(onLoop)
  }
}
