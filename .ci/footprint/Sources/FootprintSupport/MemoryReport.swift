#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's memory figures, in KiB, as one line for `.ci/footprint.sh`: the peak resident
/// set size (`VmHWM`) and the private anonymous memory resident now (`RssAnon`), from
/// /proc/self/status; elsewhere `ru_maxrss` twice (no split). -1 when unreadable.
public func memoryReport() -> String {
  #if os(Linux)
    guard let file = fopen("/proc/self/status", "r") else { return "-1 -1" }
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
    return "\(peak) \(anonymous)"
  #else
    var usage = rusage()
    guard getrusage(RUSAGE_SELF, &usage) == 0 else { return "-1 -1" }
    let kib = Int(usage.ru_maxrss) / 1024  // bytes on Darwin
    return "\(kib) \(kib)"
  #endif
}
