/// How long `Coroutine.retry(attempts:backoff:if:_:)` waits between attempts.
///
/// ```swift
/// .exponential(initial: .milliseconds(100))       // ~100 ms, ~200 ms, ~400 ms, … ±20%, ≤ 60 s
/// .exponential(initial: .seconds(1), multiplier: 1.6, maximum: .seconds(120), jitter: 0.2)
/// .constant(.milliseconds(500))                   // 500 ms every time
/// .none                                           // again at once
/// ```
///
/// The delay before retry *n* (after the *n*th failed call) is `initial × multiplierⁿ⁻¹`,
/// capped at `maximum`, then scaled by a random factor in `1 − jitter … 1 + jitter`, so that
/// many clients that failed together do not all come back together (gRPC's connection backoff
/// works the same way). Delays are computed in whole nanoseconds: with `jitter: 0` they are
/// exact, which tests on CovenantTesting's `TestScheduler` can check to the nanosecond.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct RetryBackoff: Sendable, Equatable {
  /// The delay before the first retry.
  public let initial: Duration
  /// What each delay is multiplied by to get the next (at least 1).
  public let multiplier: Double
  /// The longest delay, before jitter.
  public let maximum: Duration
  /// The fraction by which each delay is randomly shortened or lengthened (0 … 1).
  public let jitter: Double

  /// Delays that start at `initial` and grow by `multiplier` after each retry, up to
  /// `maximum`, each randomly shortened or lengthened by up to `jitter` (a fraction).
  ///
  /// - Parameters:
  ///   - initial: the delay before the first retry (negative counts as zero).
  ///   - multiplier: the growth from one delay to the next; values below 1 (and NaN) count as
  ///     1, a constant delay.
  ///   - maximum: the cap on the delay before jitter (60 s by default, so that many attempts
  ///     never mean hours of waiting; below `initial`, it caps `initial` too).
  ///   - jitter: 0.2 by default (±20%); clamped to 0 … 1; 0 for exact delays.
  public static func exponential(
    initial: Duration, multiplier: Double = 2, maximum: Duration = .seconds(60),
    jitter: Double = 0.2
  ) -> Self {
    RetryBackoff(initial: initial, multiplier: multiplier, maximum: maximum, jitter: jitter)
  }

  /// The same `delay` before every retry, without jitter.
  public static func constant(_ delay: Duration) -> Self {
    RetryBackoff(initial: delay, multiplier: 1, maximum: delay, jitter: 0)
  }

  /// No delay: each retry follows the failure at once (still a suspension point, so a
  /// cancelled coroutine stops retrying).
  public static let none = constant(.zero)

  private init(initial: Duration, multiplier: Double, maximum: Duration, jitter: Double) {
    self.initial = max(.zero, initial)
    self.multiplier = multiplier >= 1 ? multiplier : 1
    self.maximum = max(.zero, maximum)
    self.jitter = jitter.isNaN ? 0 : min(1, max(0, jitter))
  }

  /// The delay before retry `retry` (1 for the delay after the first failed call), with a random
  /// jitter from the system's generator.
  public func delay(beforeRetry retry: Int) -> Duration {
    var generator = SystemRandomNumberGenerator()
    return delay(beforeRetry: retry, using: &generator)
  }

  /// The delay before retry `retry` (1 for the delay after the first failed call), with the
  /// jitter drawn from `generator` (a seeded generator makes it repeatable).
  public func delay<Random: RandomNumberGenerator>(
    beforeRetry retry: Int, using generator: inout Random
  ) -> Duration {
    let cap = Double(maximum.clampedNanoseconds)
    var nanoseconds = min(cap, Double(initial.clampedNanoseconds))
    // initial × multiplier^(retry − 1), stopping at the cap (a huge `retry` costs little).
    var step = 1
    while step < retry, multiplier > 1, nanoseconds > 0, nanoseconds < cap {
      nanoseconds = min(cap, nanoseconds * multiplier)
      step += 1
    }
    if jitter > 0 {
      nanoseconds *= Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
    }
    // At most twice a cap of at most 2⁶⁴ ns: saturate rather than trap in the conversion.
    let rounded = nanoseconds.rounded()
    return Duration(nanoseconds: rounded < 0x1p64 ? UInt64(rounded) : .max)
  }
}
