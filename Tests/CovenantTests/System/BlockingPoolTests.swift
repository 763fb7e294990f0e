import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

final class BlockingPoolTests: XCTestCase {
  /// The closure runs on one of the pool's threads; its value comes back to the coroutine,
  /// which continues on its own queue; an error it throws is rethrown.
  func testAwaitRunsTheClosureOnAPoolThread() throws {
    let pool = BlockingPool(threads: 2)
    let (queue, key) = DispatchQueue.tagged("pool.caller")
    let future = queue.coroutineFuture { () -> (String, String?, Bool) in
      let name = try pool.await { () -> String in
        let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
      }
      let onQueue = DispatchQueue.getSpecific(key: key)
      do {
        _ = try pool.await { () throws -> Int in
          throw CoSystemError(operation: "x", path: "y", code: EIO)
        }
        return (name, onQueue, false)
      } catch let error as CoSystemError {
        return (name, onQueue, error.code == EIO)
      }
    }
    let (name, onQueue, rethrown) = try awaitResult(future)
    XCTAssertEqual(name, pool.threadName)
    XCTAssertEqual(onQueue, "pool.caller")
    XCTAssertTrue(rethrown)
    XCTAssertEqual(pool.counters.completed, 2)
  }

  /// Outside a coroutine, `await` blocks the thread and returns the closure's value.
  func testAwaitOutsideACoroutineBlocks() throws {
    let pool = BlockingPool(threads: 1)
    XCTAssertEqual(try pool.await { 6 * 7 }, 42)
    XCTAssertThrowsError(try pool.await { () throws -> Int in throw CoFutureError.timeout })
  }

  /// A closure that awaits the pool it runs on (outside a coroutine) runs inline: with one
  /// thread, waiting for another would never end.
  func testAwaitFromAPoolThreadRunsInline() throws {
    let pool = BlockingPool(threads: 1)
    XCTAssertEqual(try pool.await { try pool.await { 42 } + 1 }, 43)
  }

  /// Ten times more callers than threads: the pool runs at most its bound, the rest wait as
  /// suspended coroutines (counted as queued), and /proc shows exactly the bound's threads.
  func testThreadBoundUnderTenfoldOversubscription() throws {
    let bound = 4
    let callers = bound * 10
    let pool = BlockingPool(threads: bound)
    let gate = Gate()
    let inside = Locked((now: 0, most: 0))
    let queue = DispatchQueue(label: "pool.callers", attributes: .concurrent)
    let futures = (0..<callers).map { index in
      queue.coroutineFuture { () -> Int in
        try pool.await {
          inside.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
          }
          gate.wait()
          inside.withLock { $0.now -= 1 }
          return index
        }
      }
    }
    waitUntil { pool.counters.running == bound && pool.counters.queued == callers - bound }
    XCTAssertEqual(ProcInspector.threads(named: pool.threadName), bound)
    XCTAssertEqual(pool.counters.threads, bound)
    gate.open()
    for (index, future) in futures.enumerated() { XCTAssertEqual(try awaitResult(future), index) }
    XCTAssertEqual(inside.withLock { $0.most }, bound)
    XCTAssertEqual(pool.counters.completed, callers)
    XCTAssertEqual(pool.counters.running, 0)
    XCTAssertEqual(pool.counters.queued, 0)
    XCTAssertLessThanOrEqual(ProcInspector.threads(named: pool.threadName), bound)
  }

  /// Callers past the bound are served in the order they called.
  func testQueuedCallersRunInArrivalOrder() throws {
    let pool = BlockingPool(threads: 1)
    let gate = Gate()
    let blocker = DispatchQueue.global().coroutineFuture { try pool.await { gate.wait() } }
    waitUntil { pool.counters.running == 1 }
    let order = Recorder<Int>()
    let queue = DispatchQueue(label: "pool.fifo")
    var futures: [CoFuture<Void>] = []
    for index in 0..<20 {
      futures.append(queue.coroutineFuture { try pool.await { order.append(index) } })
      waitUntil { pool.counters.queued == index + 1 }
    }
    gate.open()
    try awaitResult(blocker)
    for future in futures { try awaitResult(future) }
    XCTAssertEqual(order.elements, Array(0..<20))
  }

  /// A caller cancelled while queued leaves the queue at once (before the queue moves), throws
  /// `CoroutineError.canceled`, and its closure never runs; the others are not disturbed.
  func testCancelledQueuedCallerLeavesTheQueueAtOnce() throws {
    let pool = BlockingPool(threads: 1)
    let gate = Gate()
    let blocker = DispatchQueue.global().coroutineFuture { try pool.await { gate.wait() } }
    waitUntil { pool.counters.running == 1 }
    let ran = Recorder<Int>()
    let outcomes = Recorder<String>()
    let scopes = (0..<3).map { _ in CoScope() }
    let queue = DispatchQueue(label: "pool.cancel")
    for index in 0..<3 {
      queue.startCoroutine(in: scopes[index]) {
        do {
          try pool.await { ran.append(index) }
          outcomes.append("\(index) ran")
        } catch CoroutineError.canceled {
          outcomes.append("\(index) canceled")
        }
      }
      waitUntil { pool.counters.queued == index + 1 }
    }
    scopes[1].cancel()
    waitUntil { pool.counters.queued == 2 }
    XCTAssertEqual(pool.counters.running, 1)  // the queue has not moved
    waitUntil { outcomes.count == 1 }
    XCTAssertEqual(outcomes.elements, ["1 canceled"])
    gate.open()
    try awaitResult(blocker)
    for scope in scopes { try scope.join() }
    XCTAssertEqual(ran.elements, [0, 2])
    XCTAssertEqual(Set(outcomes.elements), ["0 ran", "1 canceled", "2 ran"])
    XCTAssertEqual(pool.counters.completed, 3)
  }

  /// Cancelling many queued callers at once (a scope's cancel) is quick and empties the queue.
  func testCancellingManyQueuedCallers() throws {
    let pool = BlockingPool(threads: 1)
    let gate = Gate()
    let blocker = DispatchQueue.global().coroutineFuture { try pool.await { gate.wait() } }
    waitUntil { pool.counters.running == 1 }
    let callers = TestScale.liveCoroutines(10_000)
    let scope = CoScope()
    let ran = Locked(0)
    let queue = DispatchQueue(label: "pool.many")
    for _ in 0..<callers {
      queue.startCoroutine(in: scope) { try pool.await { ran.withLock { $0 += 1 } } }
    }
    waitUntil { pool.counters.queued == callers }
    scope.cancel()
    try scope.join()
    XCTAssertEqual(pool.counters.queued, 0)
    gate.open()
    try awaitResult(blocker)
    XCTAssertEqual(ran.withLock { $0 }, 0)
    XCTAssertEqual(pool.counters.completed, 1)
  }

  /// A caller cancelled while its closure runs waits for the closure (it cannot be stopped),
  /// gets its value, and its next await throws.
  func testCancelledRunningCallerWaitsForTheClosure() throws {
    let pool = BlockingPool(threads: 1)
    let gate = Gate()
    let scope = CoScope()
    let steps = Recorder<String>()
    DispatchQueue.global().startCoroutine(in: scope) {
      let value = try pool.await { () -> Int in
        steps.append("closure started")
        gate.wait()
        steps.append("closure ends")
        return 7
      }
      steps.append("returned \(value)")
      do {
        try Coroutine.yield()
      } catch CoroutineError.canceled {
        steps.append("next await canceled")
      }
    }
    waitUntil { steps.count == 1 }
    scope.cancel()
    Thread.sleep(forTimeInterval: 0.05)  // time for the coroutine to (wrongly) go on
    XCTAssertEqual(steps.elements, ["closure started"])
    gate.open()
    try scope.join()
    XCTAssertEqual(
      steps.elements, ["closure started", "closure ends", "returned 7", "next await canceled"])
  }

  /// A coroutine already cancelled does not queue anything.
  func testAlreadyCancelledCallerThrowsAtOnce() throws {
    let pool = BlockingPool(threads: 1)
    let ran = Locked(false)
    let scope = CoScope()
    scope.cancel()
    let outcome = Recorder<String>()
    DispatchQueue.global().startCoroutine(in: scope) {
      do {
        try pool.await { ran.withLock { $0 = true } }
      } catch {
        outcome.append("\(error)")
      }
    }
    try scope.join()
    XCTAssertFalse(ran.withLock { $0 })
    XCTAssertEqual(pool.counters.completed, 0)
    XCTAssertEqual(pool.counters.threads, 0)
  }

  /// Threads are made only when work comes, and end when the pool is released.
  func testThreadsStartLazilyAndEndWithThePool() throws {
    var pool: BlockingPool? = BlockingPool(threads: 3)
    let name = pool!.threadName
    XCTAssertEqual(ProcInspector.threads(named: name), 0)
    XCTAssertEqual(try pool!.await { 1 }, 1)
    XCTAssertEqual(ProcInspector.threads(named: name), 1)
    pool = nil
    waitUntil { ProcInspector.threads(named: name) == 0 }
  }

  /// Many short awaits from many coroutines at once on a small pool: every hand-off between a
  /// caller and a spinning or sleeping thread lands, the bound holds, and the counts add up.
  func testManyShortAwaitsFromManyCoroutines() throws {
    let pool = BlockingPool(threads: 3)
    let coroutines = 12
    let awaits = TestScale.stress(2_000, sanitizerDivisor: 10)
    let inside = Locked((now: 0, most: 0))
    let queue = DispatchQueue(label: "pool.short", attributes: .concurrent)
    let futures = (0..<coroutines).map { index in
      queue.coroutineFuture { () -> Int in
        var sum = 0
        for step in 0..<awaits {
          sum += try pool.await { () -> Int in
            inside.withLock {
              $0.now += 1
              $0.most = max($0.most, $0.now)
            }
            defer { inside.withLock { $0.now -= 1 } }
            return index + step
          }
          if step % 100 == 0 { try Coroutine.yield() }
        }
        return sum
      }
    }
    for (index, future) in futures.enumerated() {
      XCTAssertEqual(try awaitResult(future), awaits * index + awaits * (awaits - 1) / 2)
    }
    XCTAssertLessThanOrEqual(inside.withLock { $0.most }, 3)
    XCTAssertEqual(pool.counters.completed, coroutines * awaits)
    XCTAssertLessThanOrEqual(pool.counters.threads, 3)
  }

  /// Idle threads end after the keep-alive, and the pool makes new ones for later work.
  func testIdleThreadsEndAndComeBack() throws {
    let pool = BlockingPool(threads: 2, keepAlive: .milliseconds(20))
    let gate = Gate()
    let first = (0..<2).map { _ in
      DispatchQueue.global().coroutineFuture { try pool.await { gate.wait() } }
    }
    waitUntil { pool.counters.running == 2 }
    XCTAssertEqual(ProcInspector.threads(named: pool.threadName), 2)
    gate.open()
    for future in first { try awaitResult(future) }
    waitUntil { pool.counters.threads == 0 && ProcInspector.threads(named: pool.threadName) == 0 }
    XCTAssertEqual(try pool.await { 5 }, 5)
    XCTAssertEqual(pool.counters.completed, 3)
  }

  /// The closure's captures are released on the pool thread once it has run, not kept until
  /// the caller's next step.
  func testClosureCapturesAreReleasedAfterTheCall() throws {
    final class Token: Sendable {}
    let pool = BlockingPool(threads: 1)
    weak var weakToken: Token?
    try {
      let token = Token()
      weakToken = token
      try pool.await { withExtendedLifetime(token) {} }
    }()
    XCTAssertNil(weakToken)
  }

  /// `shared` is bounded as documented.
  func testSharedPoolSize() {
    let expected =
      ProcessInfo.processInfo.environment["COVENANT_BLOCKING_POOL_THREADS"].flatMap { Int($0) }
      ?? max(8, ProcessInfo.processInfo.activeProcessorCount)
    XCTAssertEqual(BlockingPool.shared.threadLimit, expected)
  }

  /// The result of a future, waiting for it from the test's thread.
  private func awaitResult<T>(
    _ future: CoFuture<T>, file: StaticString = #filePath, line: UInt = #line
  ) throws -> T {
    let done = DispatchSemaphore(value: 0)
    future.whenComplete { _ in done.signal() }
    XCTAssertEqual(
      done.wait(timeout: .now() + 30), .success, "future pending", file: file, line: line)
    return try XCTUnwrap(future.result, file: file, line: line).get()
  }
}
