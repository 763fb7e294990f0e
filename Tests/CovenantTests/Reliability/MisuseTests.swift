import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

/// One test per documented misuse (the DocC articles' preconditions and thrown errors), each asserting the exact error, value or
/// diagnostic. Rows that end the process run in a child copy of this binary (ChildProcess).
final class MisuseTests: XCTestCase {
  private static let childVariable = "COVENANT_MISUSE_CHILD"
  private let queue = DispatchQueue(label: "misuse", attributes: .concurrent)

  // Row: `await` outside a coroutine → throws `CoroutineError.calledOutsideCoroutine`.
  func testAwaitOutsideACoroutineThrowsCalledOutsideCoroutine() {
    let outside = CoroutineError.calledOutsideCoroutine
    XCTAssertThrowsError(try Coroutine.await { (_: @escaping @Sendable () -> Void) in }) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
    XCTAssertThrowsError(try Coroutine.await { (_: @escaping @Sendable (Int) -> Void) in }) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
    XCTAssertThrowsError(try Coroutine.delay(.milliseconds(1))) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
    XCTAssertThrowsError(try Coroutine.yield()) { XCTAssertEqual($0 as? CoroutineError, outside) }
    XCTAssertThrowsError(try CoPromise<Int>().await()) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
    XCTAssertThrowsError(try Promise<Int>.pending().await()) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
    XCTAssertThrowsError(try CoChannel<Int>().awaitReceive()) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
    XCTAssertThrowsError(try CoChannel<Int>(bufferType: .none).awaitSend(1)) {
      XCTAssertEqual($0 as? CoroutineError, outside)
    }
  }

  // Row: await on a cancelled coroutine → throws `CoroutineError.canceled` (the pending one
  // promptly, later ones at once).
  func testAwaitOnACancelledCoroutineThrowsCanceled() {
    let scope = CoScope()
    let errors = Locked<[CoroutineError?]>([])
    let suspended = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine(in: scope) {
      defer { done.signal() }
      do {
        // Never resumed.
        try Coroutine.await { (_: @escaping @Sendable () -> Void) in suspended.signal() }
      } catch { errors.withLock { $0.append(error as? CoroutineError) } }
      do { try Coroutine.yield() } catch { errors.withLock { $0.append(error as? CoroutineError) } }
      // (An already-resolved future still hands out its value at once: §4's "returns at once".)
      do { _ = try CoPromise<Int>().await() } catch {
        errors.withLock { $0.append(error as? CoroutineError) }
      }
    }
    suspended.wait()
    scope.cancel()
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(errors.withLock { $0 }, [.canceled, .canceled, .canceled])
  }

  // Row: send on a closed channel / receive after close+drain → `CoChannelError.closed`.
  func testSendOnClosedAndReceiveAfterDrainThrowClosed() throws {
    let channel = CoChannel<Int>(capacity: 4)
    XCTAssertTrue(channel.offer(7))
    XCTAssertTrue(channel.close())
    XCTAssertFalse(channel.close())
    let results = try runCoroutine(on: queue) { () -> [String] in
      var results: [String] = []
      do { try channel.awaitSend(8) } catch { results.append("send: \(error)") }
      results.append("receive: \(try channel.awaitReceive())")  // drains the buffered element
      do { _ = try channel.awaitReceive() } catch { results.append("receive: \(error)") }
      return results
    }
    XCTAssertEqual(results, ["send: closed", "receive: 7", "receive: closed"])
    XCTAssertFalse(channel.offer(9))
    XCTAssertNil(channel.poll())
  }

  // Row: any op on a cancelled channel → `CoChannelError.canceled`.
  func testEveryOperationOnACancelledChannelFailsCanceled() throws {
    let channel = CoChannel<Int>(capacity: 4)
    XCTAssertTrue(channel.offer(1))
    channel.cancel()
    XCTAssertTrue(channel.isCanceled)
    XCTAssertEqual(channel.count, 0, "cancel drops the buffer")
    let results = try runCoroutine(on: queue) { () -> [CoChannelError?] in
      var results: [CoChannelError?] = []
      do { try channel.awaitSend(2) } catch { results.append(error as? CoChannelError) }
      do { _ = try channel.awaitReceive() } catch { results.append(error as? CoChannelError) }
      do { _ = try channel.receiveFuture().await() } catch {
        results.append(error as? CoChannelError)
      }
      do {
        _ = try CoChannel.select { select in select.onReceive(channel) { $0 } }
      } catch { results.append(error as? CoChannelError) }
      return results
    }
    XCTAssertEqual(results, [.canceled, .canceled, .canceled, .canceled])
    XCTAssertFalse(channel.offer(3))
    XCTAssertNil(channel.poll())
    XCTAssertFalse(channel.close(), "close after cancel")
    let callback = Locked<Result<Int, CoChannelError>?>(nil)
    channel.whenReceive { result in callback.withLock { $0 = result } }
    XCTAssertEqual(callback.withLock { $0 }, .failure(.canceled))
  }

  // Row: `await(timeout:)` expiring → `CoFutureError.timeout`; the future is not cancelled.
  func testAwaitTimeoutExpiringThrowsTimeoutAndLeavesTheFuture() throws {
    let future = CoPromise<Int>()
    let promise = Promise<Int>.pending()
    let errors = try runCoroutine(on: queue) { () -> [CoFutureError?] in
      var errors: [CoFutureError?] = []
      do { _ = try future.await(timeout: .milliseconds(5)) } catch {
        errors.append(error as? CoFutureError)
      }
      do { _ = try promise.await(timeout: .milliseconds(5)) } catch {
        errors.append(error as? CoFutureError)
      }
      return errors
    }
    XCTAssertEqual(errors, [.timeout, .timeout])
    XCTAssertNil(future.result, "the future is not cancelled")
    XCTAssertFalse(future.isCanceled)
    XCTAssertTrue(promise.isPending)
    future.success(3)
    XCTAssertEqual(try future.result?.get(), 3)
  }

  // Row: `timeout` operator expiring → rejected with `PromiseError.timedOut`.
  func testTimeoutOperatorExpiringRejectsTimedOut() throws {
    let source = Promise<Int>.pending()
    let timed = source.timeout(on: .global(), 0.005)
    XCTAssertThrowsError(try wait(for: timed)) { XCTAssertEqual($0 as? PromiseError, .timedOut) }
    XCTAssertTrue(source.isPending, "the source is not cancelled")
  }

  // Row: fulfil/reject/success/fail twice → first wins, rest ignored.
  func testSecondResolutionIsIgnored() {
    let promise = Promise<Int>.pending()
    promise.fulfill(1)
    promise.reject(ModelishError.second)
    promise.fulfill(2)
    promise.resolve(.success(3))
    XCTAssertEqual(promise.value, 1)
    let rejected = Promise<Int>.pending()
    rejected.reject(ModelishError.first)
    rejected.fulfill(1)
    XCTAssertEqual(rejected.error as? ModelishError, .first)
    let future = CoPromise<Int>()
    future.fail(ModelishError.first)
    future.success(1)
    future.complete(with: .success(2))
    future.cancel()
    XCTAssertEqual(future.result.map { (try? $0.get()) == nil }, true)
    XCTAssertThrowsError(try future.result!.get()) { XCTAssertEqual($0 as? ModelishError, .first) }
  }

  // Row: resumption callback called twice → second ignored (also when called much later,
  // while the coroutine awaits something else).
  func testSecondResumptionIsIgnored() throws {
    let saved = Locked<(@Sendable (Int) -> Void)?>(nil)
    let values = try runCoroutine(on: queue) { () -> [Int] in
      let first = try Coroutine.await { (resume: @escaping @Sendable (Int) -> Void) in
        saved.withLock { $0 = resume }
        resume(1)
        resume(2)
      }
      let second = try Coroutine.await { (resume: @escaping @Sendable (Int) -> Void) in
        saved.withLock { $0 }?(99)  // the first await's callback, again: must not resume this one
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) { resume(3) }
      }
      return [first, second]
    }
    XCTAssertEqual(values, [1, 3])
  }

  // Row: stack overflow → diagnostic line on stderr, then the normal crash.
  // Covered by StackOverflowTests.testOverflowInCoroutineDiesWithDiagnostic (child process,
  // exact message "Covenant: coroutine stack overflow (stack size 65536 bytes)").

  // Row: `race([])` → precondition failure with a clear message (child process).
  func testRaceOfNothingIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "MisuseTests/testChildMisuse", variable: Self.childVariable, value: "emptyRace",
      message: "race(_:) needs at least one promise: a race of none can never be won")
  }
  // Row: `Generator` misuse that cannot throw → precondition failure: GeneratorMisuseTests
  // (re-entrant next, yield after drop, yield outside the body; exact messages).

  // Not a §11 row, the same kind of misuse: a select with nothing to wait for.
  func testSelectWithNoCaseIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "MisuseTests/testChildMisuse", variable: Self.childVariable, value: "emptySelect",
      message: "CoChannel.select needs at least one case, a default or a timeout")
  }

  func testChildMisuse() throws {
    switch ProcessInfo.processInfo.environment[Self.childVariable] {
    case "emptyRace":
      _ = race(on: .global(), [Promise<Int>]())
    case "emptySelect":
      let _: Int = try CoChannel.select { _ in }
    default:
      return  // only meaningful in the child process spawned above
    }
    XCTFail("the child should have crashed")
  }

  // Row: negative `retry` attempts, negative delays/timeouts → treated as 0.
  func testNegativeAttemptsDelaysAndTimeoutsAreZero() throws {
    let runs = Locked(0)
    let retried = retry(on: .global(), attempts: -5, delay: -1) { () throws -> Promise<Int> in
      runs.withLock { $0 += 1 }
      throw ModelishError.first
    }
    XCTAssertThrowsError(try wait(for: retried)) { XCTAssertEqual($0 as? ModelishError, .first) }
    XCTAssertEqual(runs.withLock { $0 }, 1, "negative attempts: one run, no retry")
    XCTAssertEqual(try wait(for: Promise<Int>(4).delay(on: .global(), -3)), 4)
    XCTAssertThrowsError(try wait(for: Promise<Int>.pending().timeout(on: .global(), -3))) {
      XCTAssertEqual($0 as? PromiseError, .timedOut)
    }
    let results = try runCoroutine(on: queue) { () -> [String] in
      var results: [String] = []
      try Coroutine.delay(.milliseconds(-5))
      results.append("delayed")
      do { _ = try CoPromise<Int>().await(timeout: .milliseconds(-5)) } catch {
        results.append("\(error)")
      }
      return results
    }
    XCTAssertEqual(results, ["delayed", "timeout"])
  }
}

private enum ModelishError: Error, Equatable { case first, second }

/// The debug-build warning about promise blocks waiting for a main queue that does not run.
final class MainQueueStallWarningTests: XCTestCase {
  private static let variable = "COVENANT_MAIN_STALL_CHILD"

  func testBlocksWaitingForAMainQueueThatDoesNotRunAreReportedOnce() throws {
    #if !DEBUG
      throw XCTSkip("debug builds only")
    #else
      if let mode = ProcessInfo.processInfo.environment[Self.variable] { return runChild(mode) }
      let stalled = try ChildProcess.run(
        test:
          "MainQueueStallWarningTests/testBlocksWaitingForAMainQueueThatDoesNotRunAreReportedOnce",
        variable: Self.variable, value: "stalled")
      XCTAssertEqual(stalled.status, 0, stalled.stderr)
      XCTAssertEqual(
        stalled.stderr.components(separatedBy: "waiting for DispatchQueue.main").count - 1, 1,
        stalled.stderr)
      XCTAssertTrue(stalled.stderr.contains("DispatchQueue.promises = .global()"), stalled.stderr)
      let served = try ChildProcess.run(
        test:
          "MainQueueStallWarningTests/testBlocksWaitingForAMainQueueThatDoesNotRunAreReportedOnce",
        variable: Self.variable, value: "served")
      XCTAssertEqual(served.status, 0, served.stderr)
      XCTAssertFalse(served.stderr.contains("waiting for DispatchQueue.main"), served.stderr)
    #endif
  }

  /// The child: chains promise blocks on the default queue, then keeps the main thread away
  /// from the main queue ("stalled") or lets it run ("served"), longer than the warning's delay.
  private func runChild(_ mode: String) {
    MainQueueStallWarning.delayMilliseconds.store(100, ordering: .relaxed)
    for _ in 0..<3 { _ = Promise(1).then { _ in } }
    if mode == "stalled" {
      usleep(400_000)
    } else {
      RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.4))
    }
  }
}
