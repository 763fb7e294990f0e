/// Collects the cases of a `CoChannel.select`: receive and send operations on any number of
/// channels (of any element types), and an optional default.
///
/// Each case has a body that runs — on the selecting coroutine, after the select has
/// completed, with no lock held — only if that case is the one chosen; its return value is
/// what `select` returns. Cases are considered in the order they are added.
public final class CoChannelSelector<Output> {
  var cases: [any SelectCase<Output>] = []
  var defaultBody: (() throws -> Output)?

  init() {}

  /// A case that receives from `channel`: `body` gets the element.
  ///
  /// If the channel is closed and drained, or cancelled, the case is ready and `select`
  /// throws `CoChannelError.closed` / `.canceled` (use `onReceiveResult` to handle that in a
  /// body instead).
  public func onReceive<Element>(
    _ channel: CoChannel<Element>, _ body: @escaping (Element) throws -> Output
  ) {
    cases.append(ReceiveCase(channel) { try body($0.get()) })
  }

  /// A case that receives from `receiver` (possibly a mapped one): `body` gets the element.
  public func onReceive<Element>(
    _ receiver: CoChannel<Element>.Receiver, _ body: @escaping (Element) throws -> Output
  ) {
    cases.append(receiver.source.selectCase { try body($0.get()) })
  }

  /// A case that receives from `channel`: `body` gets the element, or the error that ends
  /// receiving (`.closed` after close and drain, `.canceled`).
  public func onReceiveResult<Element>(
    _ channel: CoChannel<Element>,
    _ body: @escaping (Result<Element, CoChannelError>) throws -> Output
  ) {
    cases.append(ReceiveCase(channel, body))
  }

  /// A case that receives from `receiver`: `body` gets the element or the ending error.
  public func onReceiveResult<Element>(
    _ receiver: CoChannel<Element>.Receiver,
    _ body: @escaping (Result<Element, CoChannelError>) throws -> Output
  ) {
    cases.append(receiver.source.selectCase(body))
  }

  /// A case that sends `element` to `channel`; `body` runs once it has been sent (handed to a
  /// receiver or buffered). If the channel is closed or cancelled the case is ready and
  /// `select` throws `CoChannelError.closed` / `.canceled`. When another case wins, the
  /// element is not sent.
  public func onSend<Element>(
    _ channel: CoChannel<Element>, _ element: Element, _ body: @escaping () throws -> Output
  ) {
    cases.append(SendCase(channel, element, body))
  }

  /// A case that sends `element` through `sender`; see `onSend(_:_:_:)`.
  public func onSend<Element>(
    _ sender: CoChannel<Element>.Sender, _ element: Element, _ body: @escaping () throws -> Output
  ) {
    cases.append(SendCase(sender.channel, element, body))
  }

  /// What runs when no case is ready at once: the select then does not wait (and works outside
  /// coroutines too). At most one default; a later one replaces an earlier one.
  public func onDefault(_ body: @escaping () throws -> Output) {
    defaultBody = body
  }
}

extension CoChannelSelector where Output == Void {
  /// A case that sends `element` to `channel`, with nothing more to do once it is sent.
  public func onSend<Element>(_ channel: CoChannel<Element>, _ element: Element) {
    onSend(channel, element) {}
  }

  /// A case that sends `element` through `sender`, with nothing more to do once it is sent.
  public func onSend<Element>(_ sender: CoChannel<Element>.Sender, _ element: Element) {
    onSend(sender, element) {}
  }
}
