import CovenantCore
import NIOCore

extension NIOCoroutineChannel {
  /// Inside a coroutine: the next inbound value, or `nil` at the end of input (the peer closed
  /// its side, or the channel closed). Suspends the coroutine — never the thread — until a value
  /// arrives.
  ///
  /// Values received before an error are read first; then the error that ended the input is
  /// thrown (by this read and every later one).
  /// - Throws: `CoroutineError.canceled` if the coroutine is cancelled while it waits (what
  ///   arrives stays buffered for the next read); `NIOCoroutineChannelError.concurrentRead`
  ///   while another coroutine waits in a read; the channel's error; and
  ///   `CoroutineError.calledOutsideCoroutine` outside a coroutine.
  public func read() throws -> Inbound? {
    try onLoop { try $0.read(until: nil) }
  }

  /// `read()` that gives up after `timeout`, throwing `NIOCoroutineChannelError.readTimeout`.
  /// Nothing is consumed by a timed-out read: the connection stays usable, and the next read
  /// returns what arrives next.
  ///
  /// ```swift
  /// guard let request = try connection.read(timeout: .seconds(30)) else { return }
  /// ```
  public func read(timeout: Duration) throws -> Inbound? {
    let deadline = NIODeadline.after(TimeAmount(saturating: timeout))
    return try onLoop { try $0.read(until: deadline) }
  }

  /// `read(timeout:)` with a NIO `TimeAmount`.
  @_disfavoredOverload
  public func read(timeout: TimeAmount) throws -> Inbound? {
    let deadline = NIODeadline.after(timeout)
    return try onLoop { try $0.read(until: deadline) }
  }

  /// Inside a coroutine: how much has been received and not read yet — bytes when `Inbound` is
  /// `ByteBuffer`, values otherwise (as Go's `bufio.Reader.Buffered`). Never more than the
  /// inbound high watermark plus one read of the channel's.
  public func bufferedInboundCount() throws -> Int {
    try onLoop { $0.bufferedSize }
  }

  /// The inbound values as a `Sequence`, for `for value in connection.inbound { … }`: each step
  /// is a `read()`. The sequence ends at the end of input, and also at the first error (a
  /// `Sequence` cannot throw): the channel's own errors are thrown again by a `read()` after
  /// the loop, and a cancelled coroutine's next `await` throws `CoroutineError.canceled`.
  public var inbound: InboundValues { InboundValues(channel: self) }

  /// The inbound values of a `NIOCoroutineChannel` (see `inbound`).
  public struct InboundValues: Sequence, Sendable {
    let channel: NIOCoroutineChannel

    /// An iterator that reads the channel.
    public func makeIterator() -> Iterator { Iterator(channel: channel) }

    /// Reads the next value at each step; `nil` at the end of input or on an error.
    public struct Iterator: IteratorProtocol {
      let channel: NIOCoroutineChannel

      /// The next value (`read()`), or `nil` at the end of input or on an error.
      public mutating func next() -> Inbound? {
        (try? channel.read()) ?? nil
      }
    }
  }
}

extension CoroutineChannelHandler {
  /// `read()` on the loop: the next value, `nil` at the end of input, waiting until `deadline`.
  func read(until deadline: NIODeadline?) throws -> Inbound? {
    while true {
      if skipThrough != nil { dropSkippedBytesOfByteStream() }
      if let value = takeFirst() { return value }
      switch input {
      case .ended: return nil
      case .failed(let error): throw error
      case .open: try waitForInput(until: deadline)
      }
    }
  }
}

extension NIODeadline {
  /// `timeout` from now, capped at a century (clear of `NIODeadline` overflow); a negative
  /// timeout counts as zero.
  static func after(_ timeout: TimeAmount) -> NIODeadline {
    let century = TimeAmount.hours(24 * 365 * 100)
    return .now() + max(.zero, min(timeout, century))
  }
}

extension TimeAmount {
  /// `duration` in nanoseconds, saturating (negative durations count as zero).
  init(saturating duration: Duration) {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 {
      self = .zero
      return
    }
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    let (total, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
    self = .nanoseconds(overflow || overflow2 ? .max : total)
  }
}
