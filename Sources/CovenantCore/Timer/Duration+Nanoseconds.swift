import Dispatch

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
extension Duration {
  /// The duration in whole nanoseconds, with negative durations counted as zero and huge ones
  /// saturating at `UInt64.max` (sub-nanosecond parts are dropped).
  var clampedNanoseconds: UInt64 {
    guard self > .zero else { return 0 }
    // A positive duration has both components zero or more.
    let (seconds, attoseconds) = components
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return .max }
    return whole.adding(nanoseconds: UInt64(attoseconds / 1_000_000_000))
  }

  /// The same span as a `DispatchTimeInterval`, for a scheduler's timers (negative counts as
  /// zero; huge ones saturate).
  var dispatchInterval: DispatchTimeInterval {
    .nanoseconds(Int(clamping: clampedNanoseconds))
  }
}
