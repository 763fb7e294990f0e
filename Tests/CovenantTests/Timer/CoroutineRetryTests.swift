import Covenant
import CovenantTesting
import Dispatch
import XCTest

private struct Flaky: Error, Equatable {
  let call: Int
}

/// `Coroutine.retry(attempts:backoff:if:_:)` on virtual time: which calls happen, at which
/// instant, what comes out, and how cancellation stops it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class CoroutineRetryTests: XCTestCase {
  /// Runs `body` as a coroutine on a fresh `TestScheduler`, advancing virtual time until it
  /// ends (at most an hour); returns its outcome and the virtual instants of its calls.
  private func retried<T>(
    _ body: @escaping @Sendable (_ recordCall: () -> Int) throws -> T
  ) -> (result: Result<T, any Error>?, calls: [Duration]) {
    let scheduler = TestScheduler()
    let calls = Box<[Duration]>([])
    let outcome = scheduler.coroutineFuture {
      try body {
        calls.value.append(scheduler.elapsed)
        return calls.value.count
      }
    }
    var hour = 0
    while outcome.result == nil, hour < 3_600 {
      scheduler.advance(by: .seconds(1))
      hour += 1
    }
    return (outcome.result, calls.value)
  }

  func testExponentialBackoffCallsAtExactInstantsAndRethrowsTheLastError() {
    let (result, calls) = retried { call in
      try Coroutine.retry(
        attempts: 4, backoff: .exponential(initial: .milliseconds(100), jitter: 0)
      ) { () throws -> Int in throw Flaky(call: call()) }
    }
    XCTAssertEqual(calls, [.zero, .milliseconds(100), .milliseconds(300), .milliseconds(700)])
    XCTAssertThrowsError(try result?.get()) { XCTAssertEqual($0 as? Flaky, Flaky(call: 4)) }
  }

  func testReturnsTheValueOfTheFirstCallThatSucceeds() {
    let (result, calls) = retried { call in
      try Coroutine.retry(attempts: 5, backoff: .exponential(initial: .seconds(1), jitter: 0)) {
        let n = call()
        if n < 3 { throw Flaky(call: n) }
        return "call \(n)"
      }
    }
    XCTAssertEqual(try result?.get(), "call 3")
    XCTAssertEqual(calls, [.zero, .seconds(1), .seconds(3)], "attempts count the first call")
  }

  func testMultiplierAndMaximum() {
    let (_, calls) = retried { call in
      try Coroutine.retry(
        attempts: 5,
        backoff: .exponential(
          initial: .seconds(1), multiplier: 3, maximum: .seconds(5), jitter: 0)
      ) { () throws -> Int in throw Flaky(call: call()) }
    }
    // Delays 1, 3, 5 (9 capped), 5.
    XCTAssertEqual(calls, [.zero, .seconds(1), .seconds(4), .seconds(9), .seconds(14)])
  }

  func testConstantAndNoBackoff() {
    let (_, constant) = retried { call in
      try Coroutine.retry(attempts: 3, backoff: .constant(.milliseconds(250))) { () throws -> Int in
        throw Flaky(call: call())
      }
    }
    XCTAssertEqual(constant, [.zero, .milliseconds(250), .milliseconds(500)])
    let (_, immediate) = retried { call in
      try Coroutine.retry(attempts: 3, backoff: .none) { () throws -> Int in
        throw Flaky(call: call())
      }
    }
    XCTAssertEqual(immediate, [.zero, .zero, .zero])
  }

  func testFewerThanOneAttemptStillCallsOnce() {
    for attempts in [1, 0, -3] {
      let (result, calls) = retried { call in
        try Coroutine.retry(attempts: attempts, backoff: .constant(.seconds(1))) {
          () throws -> Int in throw Flaky(call: call())
        }
      }
      XCTAssertEqual(calls, [.zero], "attempts: \(attempts)")
      XCTAssertThrowsError(try result?.get()) { XCTAssertEqual($0 as? Flaky, Flaky(call: 1)) }
    }
  }

  func testAnErrorThatIsNotWorthRetryingEndsIt() {
    let (result, calls) = retried { call in
      try Coroutine.retry(
        attempts: 5, backoff: .constant(.seconds(1)), if: { ($0 as? Flaky)?.call != 2 }
      ) { () throws -> Int in throw Flaky(call: call()) }
    }
    XCTAssertEqual(calls, [.zero, .seconds(1)])
    XCTAssertThrowsError(try result?.get()) { XCTAssertEqual($0 as? Flaky, Flaky(call: 2)) }
  }

  func testTimeoutsAreRetriedCancellationsAreNot() {
    let (timeouts, timeoutCalls) = retried { call in
      try Coroutine.retry(attempts: 3, backoff: .constant(.seconds(1))) { () throws -> Int in
        _ = call()
        throw CoFutureError.timeout
      }
    }
    XCTAssertEqual(timeoutCalls.count, 3)
    XCTAssertThrowsError(try timeouts?.get()) { XCTAssertEqual($0 as? CoFutureError, .timeout) }

    for cancellation: any Error in [
      CoFutureError.canceled, CoChannelError.canceled, CancellationError(),
    ] {
      let (result, calls) = retried { call in
        try Coroutine.retry(attempts: 3, backoff: .constant(.seconds(1))) { () throws -> Int in
          _ = call()
          throw cancellation
        }
      }
      XCTAssertEqual(calls.count, 1, "\(cancellation) is not retried")
      XCTAssertThrowsError(try result?.get()) { XCTAssertTrue($0.isCancellation) }
    }
  }

  func testCancellingTheCoroutineDuringTheBackoffStopsIt() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let calls = Box<[Duration]>([])
    let outcome = Box<(any Error)?>(nil)
    scheduler.startCoroutine(in: scope) {
      do {
        _ = try Coroutine.retry(attempts: 10, backoff: .constant(.seconds(10))) {
          () throws -> Int in
          calls.value.append(scheduler.elapsed)
          throw Flaky(call: calls.value.count)
        }
      } catch {
        outcome.value = error
      }
    }
    scheduler.advance(by: .seconds(15))  // calls at 0 and 10, then waiting until 20
    XCTAssertEqual(calls.value, [.zero, .seconds(10)])
    scope.cancel()
    scheduler.run()
    XCTAssertEqual(outcome.value as? CoroutineError, .canceled)
    XCTAssertEqual(scheduler.pendingTaskCount, 0, "the backoff's timer went with it")
    scheduler.advance(by: .seconds(100))
    XCTAssertEqual(calls.value.count, 2)
  }

  func testACancelledCoroutineStartsNoFurtherCall() {
    let scheduler = TestScheduler()
    let scope = CoScope()
    let calls = Box(0)
    let outcome = Box<(any Error)?>(nil)
    scheduler.startCoroutine(in: scope) {
      do {
        _ = try Coroutine.retry(attempts: 3, backoff: .none) { () throws -> Int in
          calls.value += 1
          scope.cancel()  // the work itself notices a shutdown, and fails
          throw Flaky(call: calls.value)
        }
      } catch {
        outcome.value = error
      }
    }
    scheduler.run()
    XCTAssertEqual(calls.value, 1)
    XCTAssertEqual(outcome.value as? CoroutineError, .canceled)
  }

  func testOutsideACoroutineItThrowsWithoutCalling() {
    var called = false
    XCTAssertThrowsError(
      try Coroutine.retry(attempts: 3, backoff: .none) { called = true }
    ) { XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine) }
    XCTAssertFalse(called)
  }

  func testRetryOnARealQueue() throws {
    let attempts = Box(0)
    let value = try runCoroutine(on: DispatchQueue.global()) {
      try Coroutine.retry(attempts: 3, backoff: .exponential(initial: .milliseconds(1))) {
        attempts.value += 1
        if attempts.value < 3 { throw Flaky(call: attempts.value) }
        return 42
      }
    }
    XCTAssertEqual(value, 42)
    XCTAssertEqual(attempts.value, 3)
  }

  // MARK: The backoff's delays

  func testJitterStaysWithinItsFractionAndVaries() {
    let backoff = RetryBackoff.exponential(initial: .seconds(1))  // defaults: ×2, ≤ 60 s, ±20%
    XCTAssertEqual(backoff.multiplier, 2)
    XCTAssertEqual(backoff.maximum, .seconds(60))
    XCTAssertEqual(backoff.jitter, 0.2)
    var generator = SeededGenerator(seed: 7)
    var seen = Set<Duration>()
    for retry in 1...10 {
      let base = min(Double(1 << (retry - 1)), 60)
      for _ in 0..<50 {
        let delay = backoff.delay(beforeRetry: retry, using: &generator)
        XCTAssertGreaterThanOrEqual(delay, .seconds(base * 0.8))
        XCTAssertLessThanOrEqual(delay, .seconds(base * 1.2))
        seen.insert(delay)
      }
    }
    XCTAssertGreaterThan(seen.count, 400, "jitter spreads the delays")
    var first = SeededGenerator(seed: 42)
    var second = SeededGenerator(seed: 42)
    XCTAssertEqual(
      (1...5).map { backoff.delay(beforeRetry: $0, using: &first) },
      (1...5).map { backoff.delay(beforeRetry: $0, using: &second) }, "the same seed, the same")
  }

  func testOutOfRangeParametersAreClamped() {
    let odd = RetryBackoff.exponential(
      initial: .seconds(-1), multiplier: 0.5, maximum: .seconds(-5), jitter: 3)
    XCTAssertEqual(odd.initial, .zero)
    XCTAssertEqual(odd.multiplier, 1)
    XCTAssertEqual(odd.maximum, .zero)
    XCTAssertEqual(odd.jitter, 1)
    XCTAssertEqual(odd.delay(beforeRetry: 5), .zero)
    let nan = RetryBackoff.exponential(initial: .seconds(1), multiplier: .nan, jitter: .nan)
    XCTAssertEqual(nan.multiplier, 1)
    XCTAssertEqual(nan.jitter, 0)
    XCTAssertEqual(nan.delay(beforeRetry: 3), .seconds(1))
    let huge = RetryBackoff.exponential(
      initial: .seconds(Int64.max), multiplier: .infinity, maximum: .seconds(Int64.max),
      jitter: 1)
    for retry in [1, 2, 100, .max] {
      XCTAssertGreaterThanOrEqual(huge.delay(beforeRetry: retry), .zero)  // no trap
    }
    XCTAssertEqual(
      RetryBackoff.exponential(initial: .seconds(1), jitter: 0).delay(beforeRetry: .max),
      .seconds(60))
  }
}

/// A small deterministic generator (SplitMix64), so jitter can be checked repeatably.
private struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
