import Covenant
import CovenantModel
import CovenantTesting
import Dispatch
import Foundation
import XCTest

/// A user-defined scheduler with only `scheduleTask` (a SwiftCoroutine-style conformance): its
/// timers are the default ones.
private final class PlainScheduler: CoroutineScheduler, @unchecked Sendable {
  let queue = DispatchQueue(label: "plain-scheduler")
  func scheduleTask(_ task: @escaping () -> Void) {
    let task = UnsafeTransfer(task)
    queue.async { task.value() }
  }
}

/// Timed waits let go: when a wait with a long timeout ends another way, its timer is cancelled
/// and nothing keeps the coroutine (or what it holds) until the deadline. Each test starts a
/// coroutine holding a token, ends its 60-second wait early, and expects the token to be freed
/// within seconds. The last test is the server-shaped check: 100,000 finished handlers with
/// 30-second timed awaits leave the resident memory where it was.
final class TimedWaitReleaseTests: XCTestCase {
  private final class Token: Sendable {}

  private func schedulers() -> [(String, any CoroutineScheduler)] {
    [("dispatch queue", DispatchQueue(label: "timed-waits")), ("default timers", PlainScheduler())]
  }

  /// Runs `body` (which gets a token to hold across its wait) as a coroutine on each scheduler,
  /// and checks that the token is freed soon after the coroutine finished.
  /// With `cancelAfter`, the coroutine runs in a scope cancelled that long after it starts.
  private func expectReleased(
    _ what: String, cancelAfter: DispatchTimeInterval? = nil,
    file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable (Token) throws -> Void
  ) {
    for (name, scheduler) in schedulers() {
      let finished = DispatchSemaphore(value: 0)
      weak var weakToken: Token?
      let scope = CoScope()
      do {
        let token = Token()
        weakToken = token
        scheduler.startCoroutine(in: scope) {
          defer { finished.signal() }
          // Armed once the body runs: a coroutine cancelled before it starts never runs it.
          if let cancelAfter {
            DispatchQueue.global().asyncAfter(deadline: .now() + cancelAfter) { scope.cancel() }
          }
          try body(token)
        }
      }
      XCTAssertEqual(
        finished.wait(timeout: .now() + 10), .success, "\(what) on \(name)", file: file, line: line)
      XCTAssertTrue(
        eventually(timeout: 5) { weakToken == nil }, "\(what) on \(name): still held",
        file: file, line: line)
    }
  }

  func testFutureAwaitWithTimeoutAnsweredInTime() {
    expectReleased("CoFuture.await(timeout:)") { token in
      let reply = CoPromise<Int>()
      DispatchQueue.global().async { reply.success(1) }
      _ = try reply.await(timeout: .seconds(60))
      _ = token
    }
  }

  func testPromiseAwaitWithTimeoutAnsweredInTime() {
    expectReleased("Promise.await(timeout:)") { token in
      let reply = Promise<Int>.pending()
      DispatchQueue.global().async { reply.fulfill(1) }
      _ = try reply.await(timeout: .seconds(60))
      _ = token
    }
  }

  /// The other way round: the await times out on a promise that stays pending (and alive):
  /// the promise does not keep the coroutine either.
  func testTimedOutAwaitLeavesNothingInThePendingPromise() {
    let pending = Promise<Int>.pending()
    let pendingFuture = CoPromise<Int>()
    expectReleased("timed-out awaits") { token in
      XCTAssertThrowsError(try pending.await(timeout: .milliseconds(1)))
      XCTAssertThrowsError(try pendingFuture.await(timeout: .milliseconds(1)))
      _ = token
    }
    pending.fulfill(0)
  }

  func testDelayOfACancelledCoroutine() {
    expectReleased("Coroutine.delay", cancelAfter: .milliseconds(5)) { token in
      XCTAssertThrowsError(try Coroutine.delay(.seconds(60)))
      _ = token
    }
  }

  func testSelectTimeoutWhenACaseWins() {
    expectReleased("select onTimeout") { token in
      let channel = CoChannel<Int>()
      DispatchQueue.global().async { _ = channel.offer(1) }
      let got = try CoChannel.select { select in
        select.onReceive(channel) { $0 }
        select.onTimeout(.seconds(60)) { -1 }
      }
      XCTAssertEqual(got, 1)
      _ = token
    }
  }

  func testSemaphoreWaitAnsweredInTime() {
    expectReleased("CoSemaphore.wait(timeout:)") { token in
      let semaphore = CoSemaphore(value: 0)
      DispatchQueue.global().async { semaphore.signal() }
      try semaphore.wait(timeout: .seconds(60))
      _ = token
    }
  }

  /// A scope's deadline holds the scope weakly and goes when the scope completes.
  func testScopeDeadlineHoldsNothing() {
    weak var weakScope: CoScope?
    do {
      let scope = CoScope()
      weakScope = scope
      scope.cancel(after: .seconds(60))
    }
    XCTAssertNil(weakScope)
  }

  /// 100,000 handlers on one serial queue, each `await(timeout: .seconds(30))` on a reply that
  /// comes at once: resident memory after they have all finished stays within 32 MiB of where
  /// it started (before timers were cancelled, each finished handler and its stack stayed until
  /// its timer fired: hundreds of MiB).
  func testFinishedHandlersWithTimedAwaitsLeaveMemoryFlat() throws {
    #if !os(Linux)
      throw XCTSkip("reads /proc/self/status")
    #else
      // Full size in plain builds (the figure of the server footprint issue); a tenth under
      // sanitizers, where only the functional part is checked (see below).
      let handlers = TestScale.runsUnderSanitizer ? 10_000 : 100_000
      let queue = DispatchQueue(label: "timed-wait-handlers")
      let group = DispatchGroup()
      // Warm up the stack cache and the timer queue, so that what is measured is the handlers.
      queue.startCoroutine {
        let reply = CoPromise<Int>()
        queue.async { reply.success(0) }
        _ = try reply.await(timeout: .seconds(30))
      }
      queue.sync {}
      let before = try residentBytes()
      // In batches, as requests arrive at a server: a backlog of 100,000 coroutines not yet
      // started would measure the backlog (and malloc's reluctance to give memory back), not
      // what finished handlers leave behind.
      for _ in 0..<(handlers / 1_000) {
        for _ in 0..<1_000 {
          group.enter()
          queue.startCoroutine {
            defer { group.leave() }
            let reply = CoPromise<Int>()
            queue.async { reply.success(1) }  // runs once the handler has suspended
            _ = try reply.await(timeout: .seconds(30))
          }
        }
        queue.sync {}
      }
      XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
      let after = try residentBytes()
      let grown = Double(after - before) / 1_048_576
      print(
        String(
          format: "timed-wait handlers: %d finished, RSS %.1f -> %.1f MiB (%+.1f MiB)",
          handlers, Double(before) / 1_048_576, Double(after) / 1_048_576, grown))
      // Sanitizers keep freed memory in quarantine or shadow it: only the functional part
      // (every handler finished) means something there.
      if !TestScale.runsUnderSanitizer {
        XCTAssertLessThan(grown, 32, "resident memory grew by \(grown) MiB")
      }
    #endif
  }

  private func residentBytes() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kilobytes = Int(line.split(separator: " ")[1])
    else { throw XCTSkip("no VmRSS in /proc/self/status") }
    return kilobytes * 1_024
  }
}
