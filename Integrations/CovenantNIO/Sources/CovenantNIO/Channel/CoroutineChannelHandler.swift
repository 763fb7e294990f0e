import CovenantCore
import Dispatch
import NIOCore

/// The handler behind a `NIOCoroutineChannel`, last in its pipeline: it buffers what the
/// channel reads, asks the channel to read only when the buffer needs it, and parks and wakes
/// the coroutines that read and write.
///
/// Every stored property is read and written on the channel's event loop only: the public
/// methods of `NIOCoroutineChannel` run the calling coroutine on the loop first (without a hop
/// when it runs there already). No lock, no atomic. (`@unchecked Sendable` for that reason.)
///
/// Wake-ups are made at the end of NIO's callbacks (`channelReadComplete`,
/// `channelWritabilityChanged`, …), in a turn of the loop's scheduler, so the woken coroutine
/// continues inside that same callback: no `execute`. The writes a turn's coroutines make are
/// flushed once, when the turn ends (`TurnEndAction`).
final class CoroutineChannelHandler<Inbound, Outbound>: ChannelInboundHandler,
  RemovableChannelHandler, TurnEndAction, @unchecked Sendable
{
  typealias InboundIn = Inbound
  typealias OutboundOut = Outbound

  enum InputState {
    case open
    /// End of input: everything buffered is still read, then `nil`.
    case ended
    /// An error ended the input: everything buffered is still read, then the error.
    case failed(any Error)
  }

  enum OutputState {
    case open
    /// `closeOutbound()` (or a `close()`) on this side.
    case closedHere
    /// The channel closed (or the handler was removed).
    case channelClosed
  }

  // `@exclusivity(unchecked)` on the state that every read and write touches: it is confined
  // to the loop's thread and never accessed by two overlapping `inout`s, which the run-time
  // exclusivity check (a thread-local access set per access, in release builds too) would
  // otherwise verify at every access.
  let scheduler: EventLoopCoroutineScheduler
  private let lowWatermark: Int
  private let highWatermark: Int
  @exclusivity(unchecked) private(set) var context: ChannelHandlerContext?

  // MARK: Input

  /// Received, not yet taken; `bufferedSize` counts it (bytes for `ByteBuffer`, else values).
  @exclusivity(unchecked) var buffered = InboundQueue<Inbound>()
  @exclusivity(unchecked) var bufferedSize = 0
  @exclusivity(unchecked) var input = InputState.open
  /// The coroutine waiting in a read, if any (one at a time).
  @exclusivity(unchecked) private var reader: CoroutineWakeUp?
  /// A read was asked of the channel and not answered yet.
  @exclusivity(unchecked) private var isReading = false
  /// Reading ahead, until the buffer reaches the high watermark.
  @exclusivity(unchecked) private var readsAhead = false
  /// Something arrived (or the input ended) since the reader began waiting.
  @exclusivity(unchecked) private var hasNews = false

  // MARK: Byte streams (`NIOCoroutineChannel<ByteBuffer, ByteBuffer>`)

  /// The delimiter of a line or frame that was too long: everything up to and including its
  /// next occurrence is dropped before anything else is read.
  @exclusivity(unchecked) var skipThrough: UInt8?
  /// How far into the first buffer a search for a delimiter got without finding it.
  @exclusivity(unchecked) var searchedBytes = 0

  // MARK: Output

  @exclusivity(unchecked) var output = OutputState.open
  @exclusivity(unchecked) private var isActive = false
  @exclusivity(unchecked) private var isWritable = true
  @exclusivity(unchecked) private var flushScheduled = false
  @exclusivity(unchecked) private var hasWritten = false
  /// The small `ByteBuffer` writes of this turn after its first, copied into one buffer of the
  /// channel's allocator (`gather`); handed to the channel before any other write and when the
  /// turn ends. Only ever set when `Outbound` is `ByteBuffer`.
  @exclusivity(unchecked) private var gathered: ByteBuffer?
  /// Coroutines waiting for the channel to become writable, each with its ticket.
  private var writers: [(ticket: UInt32, wakeUp: CoroutineWakeUp)] = []
  private var nextTicket: UInt32 = 0
  /// The pending `close(mode: .output)`, once `closeOutbound()` asked for it.
  private var outputClosure: EventLoopFuture<Void>?
  /// Called once, when the channel is active and the handler in place (a server starts the
  /// connection's coroutine there); then dropped.
  var whenActive: (() -> Void)?

  init(scheduler: EventLoopCoroutineScheduler, lowWatermark: Int, highWatermark: Int) {
    self.scheduler = scheduler
    self.lowWatermark = max(0, lowWatermark)
    self.highWatermark = max(self.lowWatermark, highWatermark)
  }

  /// The size of `value` for the watermarks: its bytes for a `ByteBuffer`, else 1.
  @inline(__always)
  static func size(of value: Inbound) -> Int {
    if Inbound.self == ByteBuffer.self {
      return unsafeBitCast(value, to: ByteBuffer.self).readableBytes
    }
    return 1
  }

  // MARK: NIO's events

  func handlerAdded(context: ChannelHandlerContext) {
    self.context = context
    isWritable = context.channel.isWritable
    if context.channel.isActive { becameActive() }
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.context = nil
    isActive = false
    gathered = nil
    whenActive = nil  // it holds this handler (through the connection)
    // Output first: a reader woken by the end of input must find it closed.
    closeOutput(.channelClosed)
    endInput(.ended)
  }

  func channelActive(context: ChannelHandlerContext) {
    becameActive()
    context.fireChannelActive()
  }

  private func becameActive() {
    if isActive { return }
    isActive = true
    isWritable = context?.channel.isWritable ?? isWritable
    if let start = whenActive.take() { scheduler.runTurn(start) }
    updateReading()
  }

  func channelInactive(context: ChannelHandlerContext) {
    isActive = false
    gathered = nil
    closeOutput(.channelClosed)
    endInput(.ended)
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    // NIO calls this generic method through its protocol witness, unspecialised: a byte
    // stream (the common case) continues in code compiled for `ByteBuffer`, which appends
    // without generic metadata look-ups.
    if Inbound.self == ByteBuffer.self, Outbound.self == ByteBuffer.self {
      unsafeDowncast(self, to: CoroutineChannelHandler<ByteBuffer, ByteBuffer>.self)
        .receivedBytes(data)
      return
    }
    received(unwrapInboundIn(data))
  }

  /// A value read from the channel.
  private func received(_ value: Inbound) {
    isReading = false  // NIO answered (and cleared its own pending read)
    let size = Self.size(of: value)
    if Inbound.self == ByteBuffer.self, size == 0 { return }
    buffered.append(value)
    bufferedSize += size
    hasNews = true
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    // Also when no value reached this handler (a TLS record that carried none): the channel's
    // read is over either way, and a reader still waiting needs another.
    isReading = false
    if hasNews, reader != nil {
      wakeReader()
    } else {
      updateReading()
    }
    context.fireChannelReadComplete()
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let event = event as? ChannelEvent, event == .inputClosed {
      endInput(.ended)
    }
    context.fireUserInboundEventTriggered(event)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    endInput(.failed(error))
    context.fireErrorCaught(error)
  }

  func channelWritabilityChanged(context: ChannelHandlerContext) {
    isWritable = context.channel.isWritable
    if isWritable { wakeWriters() }
    context.fireChannelWritabilityChanged()
  }

  // MARK: Reading

  /// Asks the channel for a read if a reader waits or the buffer is under its watermarks (and
  /// none is pending, the channel is active, the input open).
  func updateReading() {
    guard isActive, !isReading, case .open = input, let context else { return }
    if reader == nil {
      if bufferedSize < lowWatermark {
        readsAhead = true
      } else if !readsAhead || bufferedSize >= highWatermark {
        readsAhead = false
        return
      }
    }
    isReading = true
    context.read()
  }

  /// Takes the first buffered value, if any.
  func takeFirst() -> Inbound? {
    guard let value = buffered.popFirst() else { return nil }
    bufferedSize -= Self.size(of: value)
    searchedBytes = 0
    updateReading()
    return value
  }

  /// Records that `count` bytes of the first buffer were taken in place.
  func tookBytes(_ count: Int) {
    bufferedSize -= count
    updateReading()
  }

  /// Suspends the calling coroutine until something arrives, the input ends, or `deadline`
  /// passes (`readTimeout`). The caller then looks at the buffer again.
  func waitForInput(until deadline: NIODeadline?) throws {
    // A reader that left (cancelled, timed out) may not have run yet to clear its slot.
    if let reader, reader.isWaiting { throw NIOCoroutineChannelError.concurrentRead }
    var timeout = DispatchTimeInterval.never
    if let deadline {
      let remaining = (deadline - .now()).nanoseconds
      if remaining <= 0 { throw NIOCoroutineChannelError.readTimeout }
      timeout = .nanoseconds(Int(remaining))
    }
    hasNews = false
    var mine: CoroutineWakeUp?
    defer { if reader == mine { reader = nil } }
    let woken = try Coroutine.awaitWakeUp(timeout: timeout, waitingFor: Inbound.self) {
      mine = $0
      reader = $0
      updateReading()
    }
    if !woken { throw NIOCoroutineChannelError.readTimeout }
  }

  /// Wakes the waiting reader, which continues right here, in a turn of the loop (inside the
  /// NIO callback that called this); then reads on if the buffer still wants it.
  private func wakeReader() {
    hasNews = false
    if let reader = reader.take() {
      scheduler.runTurn { reader.resume() }
    }
    updateReading()
  }

  private func endInput(_ state: InputState) {
    guard case .open = input else { return }
    input = state
    hasNews = true
    if reader != nil { wakeReader() }
  }

  // MARK: Writing

  /// Throws if this side can no longer write.
  func checkOutput() throws {
    switch output {
    case .open: return
    case .closedHere: throw NIOCoroutineChannelError.outputClosed
    case .channelClosed: throw NIOCoroutineChannelError.channelClosed
    }
  }

  /// Suspends the calling coroutine while the channel is over its high watermark; throws once
  /// it cannot write (closed), or the coroutine's cancellation.
  func awaitWritable() throws {
    while true {
      try checkOutput()
      if isWritable { return }
      let ticket = nextTicket
      nextTicket &+= 1
      do {
        _ = try Coroutine.awaitWakeUp(waitingFor: Outbound.self) { wakeUp in
          writers.append((ticket, wakeUp))
        }
      } catch {
        writers.removeAll { $0.ticket == ticket }
        if writers.isEmpty { writers = [] }
        throw error
      }
    }
  }

  /// Writes `value` (unflushed: the turn's end flushes it). The first write of a turn goes to
  /// the channel as it is; later small `ByteBuffer`s are copied into one buffer (`gather`).
  func write(_ value: Outbound) {
    guard let context else { return }
    hasWritten = true
    if !flushScheduled {
      flushScheduled = true
      scheduler.atTurnEnd(self)
    } else if Outbound.self == ByteBuffer.self,
      gather(unsafeBitCast(value, to: ByteBuffer.self), context: context)
    {
      return
    }
    context.write(wrapOutboundOut(value), promise: nil)
  }

  /// Writes of at most this many bytes, after the first of a turn, are gathered.
  static var gatheredWriteLimit: Int { 1_024 }
  /// Once the gathered buffer holds this many bytes it goes to the channel (whose watermarks
  /// count it from then on), and the next small write starts another.
  static var gatheredBufferLimit: Int { 16_384 }

  /// The replies to a batch of pipelined requests, each written from a buffer of its own,
  /// would each hold that buffer until the turn's flush, so that the server's next reply needs
  /// a new one: an allocation per reply. Copied into one buffer instead, they cost one per
  /// turn, leave in one `writev` entry, and the server's buffer is free for the next reply.
  /// Returns whether `buffer` was gathered; when not (too large), what was gathered goes to
  /// the channel first, so that the order of the writes is kept.
  private func gather(_ buffer: ByteBuffer, context: ChannelHandlerContext) -> Bool {
    guard buffer.readableBytes <= Self.gatheredWriteLimit else {
      writeGathered(context)
      return false
    }
    if gathered == nil {
      gathered = context.channel.allocator.buffer(capacity: Self.gatheredWriteLimit)
    }
    gathered!.writeImmutableBuffer(buffer)  // in place: no copy of the gathered bytes
    if gathered.unsafelyUnwrapped.readableBytes >= Self.gatheredBufferLimit {
      writeGathered(context)
    }
    return true
  }

  /// Hands the gathered writes to the channel (unflushed).
  private func writeGathered(_ context: ChannelHandlerContext) {
    guard let buffer = gathered.take() else { return }
    context.write(wrapOutboundOut(unsafeBitCast(buffer, to: Outbound.self)), promise: nil)
  }

  func turnDidEnd() {
    flushScheduled = false
    guard let context else { return }
    writeGathered(context)
    context.flush()
  }

  private func wakeWriters() {
    if writers.isEmpty { return }
    let waiting = writers
    writers = []
    scheduler.runTurn {
      for writer in waiting { writer.wakeUp.resume() }
    }
  }

  private func closeOutput(_ state: OutputState) {
    if case .channelClosed = output { return }
    output = state
    wakeWriters()
  }

  // MARK: Closing

  /// `closeOutbound()`: no more writes from this side; what was written is sent, then the
  /// channel's output is shut down (a TCP FIN; TLS's close_notify first).
  func closeOutbound() {
    guard case .open = output else { return }
    closeOutput(.closedHere)
    guard let context, isActive else { return }
    flushScheduled = false
    writeGathered(context)
    context.flush()
    let promise = context.eventLoop.makePromise(of: Void.self)
    context.close(mode: .output, promise: promise)
    outputClosure = promise.futureResult
  }

  /// `close()`: sends what was written (waiting for it at most `drainTimeout`, or until the
  /// coroutine is cancelled), then closes the channel.
  func close(drainTimeout: TimeAmount) throws {
    if case .open = output, hasWritten { closeOutbound() }
    closeOutput(.closedHere)
    var cancellation: (any Error)?
    if let outputClosure = outputClosure.take() {
      do {
        _ = try Coroutine.awaitWakeUp(
          timeout: .nanoseconds(Int(drainTimeout.nanoseconds)), waitingFor: Void.self
        ) { wakeUp in
          outputClosure.whenComplete { _ in wakeUp.resume() }
        }
      } catch {
        cancellation = error  // closes at once, then reports it
      }
    }
    context?.close(mode: .all, promise: nil)
    if let cancellation { throw cancellation }
  }
}

extension CoroutineChannelHandler where Inbound == ByteBuffer, Outbound == ByteBuffer {
  /// `channelRead` of a byte stream: `received`, compiled for `ByteBuffer`.
  fileprivate func receivedBytes(_ data: NIOAny) { received(unwrapInboundIn(data)) }
}
