import CCoroutineContext

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Thrown when a coroutine cannot get a stack (the address space or mapping limit is exhausted).
public struct CoroutineStartError: Error, CustomStringConvertible, Sendable {
  /// The stack size asked for, in bytes (0: the default).
  public let stackSize: Int
  /// Describes the failure.
  public var description: String {
    "Covenant: could not allocate a coroutine stack of \(stackSize == 0 ? Int(cov_stack_default_size()) : stackSize) bytes"
  }
}

/// Reports a coroutine that could not start (no `onStartFailure` handler) on stderr, with
/// `write(2)`: the core does not load Foundation for `FileHandle`.
func reportUnstartableCoroutine(_ error: any Error) {
  var message = "\(error)\n"
  message.withUTF8 { bytes in
    var remaining = UnsafeRawBufferPointer(bytes)
    while !remaining.isEmpty {
      let written = write(2, remaining.baseAddress, remaining.count)
      if written <= 0 { return }
      remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
    }
  }
}
