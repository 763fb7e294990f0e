#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Writes `line` and a newline to stderr with `write(2)`: the core does not load Foundation for
/// `FileHandle`.
func writeLineToStandardError(_ line: String) {
  var message = "\(line)\n"
  message.withUTF8 { bytes in
    var remaining = UnsafeRawBufferPointer(bytes)
    while !remaining.isEmpty {
      let written = write(2, remaining.baseAddress, remaining.count)
      if written <= 0 { return }
      remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
    }
  }
}
