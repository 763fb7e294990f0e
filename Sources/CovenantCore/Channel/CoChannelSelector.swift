import Dispatch

/// The cases of one `CoChannel.select` (or `selectUnbiased`): receive and send operations on
/// any number of channels (of any element types), and an optional default.
///
/// Each case has a body that runs — on the selecting coroutine, with no lock held — only if
/// that case is the one performed; its return value is what `select` returns.
///
/// **Cases are tried as they are added.** In `select`, a case that can complete at once when
/// it is added (and no earlier case did) is performed there and then, its body runs, and every
/// later case is ignored: a select whose first case is ready costs one `poll`. Cases that
/// cannot complete are kept, and the select waits on them only if no case could complete.
/// `selectUnbiased` keeps every case and then tries them in a random order.
///
/// **Disabled cases.** A case whose channel is `nil` is left out, like a `nil` channel in Go;
/// so is a case added under an `if` that is false. Both work inside one select expression:
///
/// ```swift
/// var ticks: CoChannel<Tick>? = ticker          // set to nil to stop taking ticks
/// let event: Event = try CoChannel.select { select in
///   select.onReceive(results) { .result($0) }
///   select.onReceive(ticks) { .tick($0) }        // left out while `ticks` is nil
///   if wantsStop { select.onReceive(stop) { _ in .stop } }
/// }
/// ```
public struct CoChannelSelector<Output> {
  /// What the select returns, once a case (or the default) has run.
  @usableFromInline var outcome: Result<Output, any Error>?
  /// Cases kept for waiting, or for the random pick.
  @usableFromInline var slots: SelectSlots<Output>
  @usableFromInline var defaultBody: (() throws -> Output)?
  @usableFromInline var timeout: SelectTimeout<Output>?
  @usableFromInline let isUnbiased: Bool

  @inlinable init(unbiased: Bool, room: UnsafeMutableBufferPointer<SelectSlot<Output>>) {
    isUnbiased = unbiased
    slots = SelectSlots(room: room)
  }

  // MARK: Receive

  /// A case that receives from `channel`: `body` gets the element. Left out if `channel` is
  /// `nil`.
  ///
  /// If the channel is closed and drained, or cancelled, the case is ready and `select`
  /// throws `CoChannelError.closed` / `.canceled` (use `onReceiveResult` to handle that in a
  /// body instead).
  @inlinable
  public mutating func onReceive<Element>(
    _ channel: CoChannel<Element>?, _ body: @escaping (Element) throws -> Output
  ) {
    add(channel, ReceiveOperation(), .value(body))
  }

  /// A case that receives from `channel`: `body` gets the element (see the optional-channel
  /// form; this one saves wrapping the channel in an optional).
  @inlinable
  public mutating func onReceive<Element>(
    _ channel: CoChannel<Element>, _ body: @escaping (Element) throws -> Output
  ) {
    add(channel, ReceiveOperation(), .value(body))
  }

  /// A case that receives from `receiver` (possibly a mapped one): `body` gets the element.
  /// Left out if `receiver` is `nil`.
  @inlinable
  public mutating func onReceive<Element>(
    _ receiver: CoChannel<Element>.Receiver?, _ body: @escaping (Element) throws -> Output
  ) {
    add(receiver, .value(body))
  }

  /// A case that receives from `channel`: `body` gets the element, or the error that ends
  /// receiving (`.closed` after close and drain, `.canceled`). Left out if `channel` is `nil`.
  @inlinable
  public mutating func onReceiveResult<Element>(
    _ channel: CoChannel<Element>?,
    _ body: @escaping (Result<Element, CoChannelError>) throws -> Output
  ) {
    add(channel, ReceiveOperation(), .result(body))
  }

  /// A case that receives from `receiver`: `body` gets the element or the ending error. Left
  /// out if `receiver` is `nil`.
  @inlinable
  public mutating func onReceiveResult<Element>(
    _ receiver: CoChannel<Element>.Receiver?,
    _ body: @escaping (Result<Element, CoChannelError>) throws -> Output
  ) {
    add(receiver, .result(body))
  }

  // MARK: Send

  /// A case that sends `element` to `channel`; `body` runs once it has been sent (handed to a
  /// receiver or buffered). If the channel is closed or cancelled the case is ready and
  /// `select` throws `CoChannelError.closed` / `.canceled`. When another case is performed,
  /// the element is not sent. Left out if `channel` is `nil`.
  @inlinable
  public mutating func onSend<Element>(
    _ channel: CoChannel<Element>?, _ element: Element, _ body: @escaping () throws -> Output
  ) {
    add(channel, SendOperation(element), .plain(body))
  }

  /// A case that sends `element` through `sender`; see `onSend(_:_:_:)`.
  @inlinable
  public mutating func onSend<Element>(
    _ sender: CoChannel<Element>.Sender?, _ element: Element,
    _ body: @escaping () throws -> Output
  ) {
    add(sender?.channel, SendOperation(element), .plain(body))
  }

  // MARK: Default

  /// What runs when no case can complete at once: the select then does not wait (and works
  /// outside coroutines too). At most one default; a later one replaces an earlier one.
  @inlinable
  public mutating func onDefault(_ body: @escaping () throws -> Output) {
    defaultBody = body
  }

  // MARK: Timeout

  /// What runs when no case completes within `interval` of the select starting to wait (Kotlin's
  /// `onTimeout`): the select then stops waiting, performs no case, and returns `body`'s value.
  ///
  /// ```swift
  /// let reply = try CoChannel.select { select in
  ///   select.onReceive(replies) { Optional($0) }
  ///   select.onTimeout(.seconds(2)) { nil }        // a receive with a timeout
  /// }
  /// ```
  ///
  /// The timer is the coroutine's scheduler's (`CoroutineScheduler.scheduleTask(after:_:)`),
  /// armed only if the select has to wait and cancelled as soon as a case completes. With
  /// `onDefault` as well, the default runs instead (the select never waits). At most one
  /// timeout; a later one replaces an earlier one. A negative interval counts as zero.
  @inlinable
  public mutating func onTimeout(
    _ interval: DispatchTimeInterval, _ body: @escaping () throws -> Output
  ) {
    timeout = SelectTimeout(interval: interval, body: body)
  }

  // MARK: Running

  /// Adds a case: performs it now if `select` may and it can complete, else keeps it.
  @inlinable
  mutating func add<Operation: ChannelOperation>(
    _ channel: CoChannel<Operation.Element>?, _ operation: Operation,
    _ body: SelectCaseBody<Operation.Value, Output>
  ) {
    guard let channel else { return }
    add(channel, operation, body)
  }

  @inlinable
  mutating func add<Operation: ChannelOperation>(
    _ channel: CoChannel<Operation.Element>, _ operation: Operation,
    _ body: SelectCaseBody<Operation.Value, Output>
  ) {
    guard outcome == nil else { return }
    if !isUnbiased, channel.mightCompleteNow(operation),
      let result = channel.performNow(operation)
    {
      outcome = Result { try body.run(with: result) }
      return
    }
    SelectSlotOperations.initialize(
      slots.appendUninitialized(), channel: channel, SelectPayload(operation, body))
  }

  /// Adds a receive case on a receiver: its channel's case, or, for a mapped receiver, one
  /// that goes through its source (which allocates a little).
  @inlinable
  mutating func add<Element>(
    _ receiver: CoChannel<Element>.Receiver?, _ body: SelectCaseBody<Element, Output>
  ) {
    guard let receiver, outcome == nil else { return }
    if let channel = receiver.channel { return add(channel, ReceiveOperation(), body) }
    addMapped(receiver, body)
  }

  /// A derived receiver's case: performed at once if it can complete (in `selectUnbiased` too,
  /// when the receiver holds a ready outcome of its own), else kept on the channel its source
  /// reads from.
  @usableFromInline
  mutating func addMapped<Element>(
    _ receiver: CoChannel<Element>.Receiver, _ body: SelectCaseBody<Element, Output>
  ) {
    if !isUnbiased || receiver.source.holdsReadyOutcome,
      let result = receiver.source.receiveNow()
    {
      outcome = Result { try body.run(with: result) }
      return
    }
    receiver.source.initializeSelectSlot(slots.appendUninitialized(), body)
  }

  /// Completes the select once every case has been added: the case performed while adding,
  /// else (`selectUnbiased`) a random ready one, else the default, else a wait.
  @inlinable
  mutating func complete() throws -> Output {
    defer { slots.discardAll() }
    if let outcome { return try outcome.get() }
    if isUnbiased, let output = try slots.attemptInRandomOrder() { return output }
    if let defaultBody {
      slots.discardAll()
      return try defaultBody()
    }
    guard let timeout else { return try slots.wait(timeout: .never).unsafelyUnwrapped }
    if let output = try slots.wait(timeout: timeout.interval) { return output }
    slots.discardAll()
    return try timeout.body()
  }
}

extension CoChannelSelector where Output == Void {
  /// A case that sends `element` to `channel`, with nothing more to do once it is sent.
  @inlinable
  public mutating func onSend<Element>(_ channel: CoChannel<Element>?, _ element: Element) {
    onSend(channel, element) {}
  }

  /// A case that sends `element` through `sender`, with nothing more to do once it is sent.
  @inlinable
  public mutating func onSend<Element>(_ sender: CoChannel<Element>.Sender?, _ element: Element) {
    onSend(sender, element) {}
  }
}
