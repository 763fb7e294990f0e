import Dispatch

extension DispatchTimeInterval {
  /// The interval in nanoseconds, with negative intervals counted as zero and huge ones
  /// saturating at `UInt64.max`; `nil` for `.never`.
  package var clampedNanoseconds: UInt64? {
    func scaled(_ count: Int, by factor: UInt64) -> UInt64 {
      guard count > 0 else { return 0 }
      let (product, overflow) = UInt64(count).multipliedReportingOverflow(by: factor)
      return overflow ? .max : product
    }
    switch self {
    case .seconds(let n): return scaled(n, by: 1_000_000_000)
    case .milliseconds(let n): return scaled(n, by: 1_000_000)
    case .microseconds(let n): return scaled(n, by: 1_000)
    case .nanoseconds(let n): return scaled(n, by: 1)
    case .never: return nil
    @unknown default: return nil
    }
  }
}

extension UInt64 {
  /// `self + interval`, saturating at `UInt64.max` (a deadline that never comes).
  package func adding(nanoseconds interval: UInt64) -> UInt64 {
    let (sum, overflow) = addingReportingOverflow(interval)
    return overflow ? .max : sum
  }
}
