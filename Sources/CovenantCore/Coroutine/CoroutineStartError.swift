import CCoroutineContext

/// Thrown when a coroutine cannot get a stack (the address space or mapping limit is exhausted).
public struct CoroutineStartError: Error, CustomStringConvertible, Sendable {
  /// The stack size asked for, in bytes (0: the default).
  public let stackSize: Int
  /// Describes the failure.
  public var description: String {
    "Covenant: could not allocate a coroutine stack of \(stackSize == 0 ? Int(cov_stack_default_size()) : stackSize) bytes"
  }
}

/// Reports a coroutine that could not start (no `onStartFailure` handler) on stderr.
func reportUnstartableCoroutine(_ error: any Error) {
  writeLineToStandardError("\(error)")
}
