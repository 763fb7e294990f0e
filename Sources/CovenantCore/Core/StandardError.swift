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
  writeAll("\(line)\n", toFileDescriptor: 2)
}

/// Writes all of `text` to `fileDescriptor` with `write(2)`, again after an interruption by a
/// signal; gives up at the first error (a closed pipe, a full disk).
func writeAll(_ text: String, toFileDescriptor fileDescriptor: Int32) {
  var text = text
  text.withUTF8 { bytes in
    var remaining = UnsafeRawBufferPointer(bytes)
    while !remaining.isEmpty {
      let written = write(fileDescriptor, remaining.baseAddress, remaining.count)
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return }
      remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
    }
  }
}
