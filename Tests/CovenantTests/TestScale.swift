import Foundation

/// Sizes for stress tests: full size normally, scaled down when a sanitizer runtime is loaded.
///
/// Under ThreadSanitizer every memory access and every contended lock (a priority-inheritance
/// futex on Linux) costs one to two orders of magnitude more, so a 100,000-element run takes
/// minutes. The sanitizer runs exercise the same code paths and interleavings on smaller
/// counts; the ordinary debug and release runs keep the full sizes.
enum TestScale {
  /// Whether ThreadSanitizer or AddressSanitizer is loaded into this process.
  static let runsUnderSanitizer: Bool = {
    #if os(Linux)
      let handle = dlopen(nil, RTLD_NOW)
      defer { if let handle { dlclose(handle) } }
      return dlsym(handle, "__tsan_init") != nil || dlsym(handle, "__asan_init") != nil
    #else
      return false
    #endif
  }()

  /// `count`, or `count / divisor` (at least 1) under a sanitizer.
  static func stress(_ count: Int, sanitizerDivisor divisor: Int = 20) -> Int {
    runsUnderSanitizer ? max(1, count / divisor) : count
  }
}
