#if canImport(Glibc)
  import Glibc
#else
  import Darwin
#endif

/// Nanoseconds on the monotonic clock: the store's expiry times (`SET … EX/PX`) are in it, so a
/// change of the wall clock moves no deadline.
@usableFromInline
func monotonicNanoseconds() -> UInt64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}
