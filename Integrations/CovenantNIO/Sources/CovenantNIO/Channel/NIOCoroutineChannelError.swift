/// Errors of `NIOCoroutineChannel` reads and writes.
///
/// Cancellation is not one of them: a read or write pending in a cancelled coroutine throws
/// Covenant's `CoroutineError.canceled`, as every other await does. Errors of the connection
/// itself (a reset, a TLS alert) are thrown as NIO reports them (`IOError`, `NIOSSLError`, …).
public enum NIOCoroutineChannelError: Error, Equatable, Sendable, CustomStringConvertible {
  /// `read(timeout:)` found nothing within its timeout. The connection is unaffected: nothing
  /// was consumed, the next read continues where this one stopped.
  case readTimeout

  /// A write after `closeOutbound()` or `close()` on this side.
  case outputClosed

  /// A write on a channel that is closed (the peer reset it, an error closed it, or it was
  /// closed by other code). Reads on it return what was received before, then `nil` (or the
  /// error that closed it).
  case channelClosed

  /// `readLine(maxLength:)` met a line longer than `maxLength` bytes (its terminator not
  /// counted). The whole line is skipped — what was received of it now, and the rest as it
  /// arrives — so the next read starts at the next line.
  case lineTooLong(maxLength: Int)

  /// `read(until:maxLength:)` met a frame longer than `maxLength` bytes before its delimiter.
  /// The whole frame is skipped up to and including its delimiter, as for `lineTooLong`.
  case frameTooLong(maxLength: Int)

  /// `read(exactly:)` reached the end of input after `received` of the `expected` bytes (which
  /// are dropped: a frame cut short by the peer).
  case unexpectedEndOfInput(expected: Int, received: Int)

  /// A read while another coroutine waits in a read of the same channel: a stream has one
  /// reader at a time (several coroutines may write).
  case concurrentRead

  /// Describes the error.
  public var description: String {
    switch self {
    case .readTimeout:
      "NIOCoroutineChannel: read timed out (nothing was consumed; the connection is usable)"
    case .outputClosed:
      "NIOCoroutineChannel: write after closeOutbound() or close()"
    case .channelClosed:
      "NIOCoroutineChannel: write on a closed channel"
    case .lineTooLong(let maxLength):
      "NIOCoroutineChannel: line longer than \(maxLength) bytes (skipped)"
    case .frameTooLong(let maxLength):
      "NIOCoroutineChannel: frame longer than \(maxLength) bytes before its delimiter (skipped)"
    case .unexpectedEndOfInput(let expected, let received):
      "NIOCoroutineChannel: end of input after \(received) of \(expected) bytes"
    case .concurrentRead:
      "NIOCoroutineChannel: read while another coroutine is reading the same channel"
    }
  }
}
