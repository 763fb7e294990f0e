import Foundation

/// Sizes for stress tests: full size normally and under ThreadSanitizer, scaled down under
/// AddressSanitizer.
///
/// ThreadSanitizer runs every test at full size: since the lock hand-over is annotated before
/// the protected access (`InlineMutex.withLock`), a contended lock costs TSan no race report, and
/// the whole suite takes under a minute there. A reduction under TSan could hide a race that
/// needs many hand-overs to show, so there is none.
enum TestScale {
  /// Whether ThreadSanitizer or AddressSanitizer is loaded into this process.
  static let runsUnderSanitizer: Bool = runsUnderThreadSanitizer || runsUnderAddressSanitizer

  /// Whether ThreadSanitizer is loaded into this process.
  static let runsUnderThreadSanitizer: Bool = symbolIsLoaded("__tsan_init")

  /// Whether AddressSanitizer is loaded into this process.
  static let runsUnderAddressSanitizer: Bool = symbolIsLoaded("__asan_init")

  /// `COVENANT_FULL_SIZE=1` keeps the full sizes under AddressSanitizer too.
  static let fullSizeRequested = ProcessInfo.processInfo.environment["COVENANT_FULL_SIZE"] == "1"

  /// `count`, or `count / divisor` (at least 1) under AddressSanitizer.
  static func stress(_ count: Int, sanitizerDivisor divisor: Int = 20) -> Int {
    runsUnderAddressSanitizer && !fullSizeRequested ? max(1, count / divisor) : count
  }

  /// For coroutines alive at once: `count`, or `count / 20` (at least 1) under either
  /// sanitizer. ThreadSanitizer keeps a trace per fiber, and 100,000 live coroutines ran it out
  /// of mappings ("ThreadSanitizer: out of memory ... TracePart").
  static func liveCoroutines(_ count: Int) -> Int {
    runsUnderSanitizer && !fullSizeRequested ? max(1, count / 20) : count
  }

  private static func symbolIsLoaded(_ name: String) -> Bool {
    #if os(Linux)
      let handle = dlopen(nil, RTLD_NOW)
      defer { if let handle { dlclose(handle) } }
      return dlsym(handle, name) != nil
    #else
      return false
    #endif
  }
}
