#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The largest private anonymous RSS (`RssAnon`, KiB) seen by `sampleMemory()`. Written only by
/// the program's one work block, before it signals the semaphore the main thread waits on, and
/// by the main thread after that wait: the semaphore orders the accesses, hence `unsafe`.
nonisolated(unsafe) private var anonymousPeak = -1

/// Records the private anonymous memory resident now. The programs call it at their peak
/// point — inside the work, while the coroutine (its stack) and the queues are alive — and
/// `memoryReport()` calls it again at the end; the larger reading is reported.
public func sampleMemory() {
  anonymousPeak = max(anonymousPeak, statusFigures().anonymous)
}

/// The process's figures as one line for `.ci/footprint.sh`: the peak resident set size
/// (`VmHWM`, KiB: code and shared-library pages included), the peak of the private anonymous
/// memory (`RssAnon`, KiB, the largest reading of `sampleMemory()`), from /proc/self/status,
/// and how many mappings of /proc/self/maps are Foundation or ICU libraries (loaded at run time,
/// which `ldd` would miss for a `dlopen`). Elsewhere `ru_maxrss` twice (no split) and 0.
/// -1 when unreadable.
public func memoryReport() -> String {
  sampleMemory()
  return "\(statusFigures().peak) \(anonymousPeak) \(foundationMappings())"
}

/// The lines of /proc/self/maps naming a Foundation or ICU library (`libFoundation*`,
/// `libFoundationEssentials`, `lib_FoundationICU`, `libicu*`).
private func foundationMappings() -> Int {
  #if os(Linux)
    guard let file = fopen("/proc/self/maps", "r") else { return -1 }
    defer { fclose(file) }
    var count = 0
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), file) != nil {
      let bytes = line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
      let text = String(decoding: bytes, as: UTF8.self).lowercased()
      guard let name = text.split(separator: "/").last else { continue }
      if name.contains("foundation") || name.hasPrefix("libicu") { count += 1 }
    }
    return count
  #else
    return 0
  #endif
}

/// `VmHWM` and `RssAnon` of /proc/self/status in KiB (on Darwin `ru_maxrss` for both).
private func statusFigures() -> (peak: Int, anonymous: Int) {
  #if os(Linux)
    guard let file = fopen("/proc/self/status", "r") else { return (-1, -1) }
    defer { fclose(file) }
    var peak = -1
    var anonymous = -1
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
      let bytes = line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
      let text = String(decoding: bytes, as: UTF8.self)
      let kib = Int(text.filter { $0.isNumber }) ?? -1
      if text.hasPrefix("VmHWM:") { peak = kib }
      if text.hasPrefix("RssAnon:") { anonymous = kib }
    }
    return (peak, anonymous)
  #else
    var usage = rusage()
    guard getrusage(RUSAGE_SELF, &usage) == 0 else { return (-1, -1) }
    let kib = Int(usage.ru_maxrss) / 1024  // bytes on Darwin
    return (kib, kib)
  #endif
}
