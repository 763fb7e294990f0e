import Dispatch

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Duration {
  /// The duration in whole nanoseconds, rounded up (a wait is never shorter than asked), with
  /// negative durations counted as zero and huge ones saturating at `UInt64.max`.
  package var clampedNanoseconds: UInt64 {
    guard self > .zero else { return 0 }
    // Positive: both components are at least zero.
    let (seconds, attoseconds) = components
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return .max }
    let (fraction, remainder) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    return whole.adding(nanoseconds: UInt64(fraction) + (remainder > 0 ? 1 : 0))
  }

  /// The same interval as a `DispatchTimeInterval`, for the timers, which count in
  /// nanoseconds: negative durations count as zero, and those past `Int.max` nanoseconds
  /// (292 years) as `Int.max`, a deadline that never comes.
  package var dispatchTimeInterval: DispatchTimeInterval {
    .nanoseconds(Int(clamping: clampedNanoseconds))
  }

  /// `nanoseconds` as a `Duration`.
  package init(nanoseconds: UInt64) {
    self = .nanoseconds(Int64(clamping: nanoseconds))
  }
}
