import NIOCore

/// One connection's side of the RESP commands: runs each command against the shared store and
/// registry and writes its reply. Both servers use it, so that they differ only in how they read
/// commands and write replies.
///
/// Not thread-safe: a connection's commands run one at a time, on the connection's own
/// coroutine (or task).
public struct RESPSession {
  /// The data every connection shares.
  public let store: RESPStore
  /// The pub/sub registry every connection shares.
  public let pubsub: RESPPubSub
  private let makeSubscriber: () -> any RESPSubscriber
  private let allocator = ByteBufferAllocator()
  /// Set by the first SUBSCRIBE; from then on every reply is pushed through it (see
  /// `RESPSubscriber`).
  public private(set) var subscriber: (any RESPSubscriber)?
  /// The channels this connection is subscribed to (copies of their names).
  private var channels: Set<ByteBuffer> = []

  /// A session on `store` and `pubsub`. `makeSubscriber` is called once, at the connection's
  /// first SUBSCRIBE, and makes the queue every later frame of the connection goes through.
  public init(
    store: RESPStore, pubsub: RESPPubSub, makeSubscriber: @escaping () -> any RESPSubscriber
  ) {
    self.store = store
    self.pubsub = pubsub
    self.makeSubscriber = makeSubscriber
  }

  /// Runs the command `arguments` (its name first) and writes its reply to `out` — or, once the
  /// connection has subscribed, pushes it to the subscriber (and `out` stays as it was).
  /// Returns false when the connection must be closed once the reply is written (QUIT).
  public mutating func execute(_ arguments: [ByteBuffer], into out: inout ByteBuffer) -> Bool {
    guard let subscriber else { return run(arguments, into: &out) }
    var reply = allocator.buffer(capacity: 64)
    let keepOpen = run(arguments, into: &reply)
    if reply.readableBytes > 0 { subscriber.push(reply) }
    return keepOpen
  }

  /// Leaves every channel: call it when the connection ends.
  public mutating func end() {
    guard let subscriber else { return }
    for channel in channels { pubsub.unsubscribe(subscriber, from: channel) }
    channels.removeAll()
  }

  private mutating func run(_ arguments: [ByteBuffer], into out: inout ByteBuffer) -> Bool {
    guard let first = arguments.first else { return true }  // an empty command: no reply
    guard let command = RESPCommandName(first) else {
      out.writeRESPError(
        "ERR unknown command '\(first.printable)', with args beginning with: "
          + arguments.dropFirst().prefix(8).map { "'\($0.printable)' " }.joined())
      return true
    }
    guard command.accepts(argumentCount: arguments.count) else {
      out.writeRESPError("ERR wrong number of arguments for '\(command.errorName)' command")
      return true
    }
    if subscriber != nil && !channels.isEmpty {
      switch command {
      case .subscribe, .unsubscribe, .ping, .quit: break
      default:
        out.writeRESPError(
          "ERR Can't execute '\(command.errorName)': only (P|S)SUBSCRIBE / "
            + "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
        return true
      }
    }
    switch command {
    case .ping: ping(arguments, into: &out)
    case .echo: out.writeRESPBulk(arguments[1])
    case .get:
      if let value = store.get(arguments[1]) {
        out.writeRESPBulk(value)
      } else {
        out.writeRESPNull()
      }
    case .set: set(arguments, into: &out)
    case .del:
      out.writeRESPInteger(arguments.dropFirst().reduce(0) { $0 + (store.delete($1) ? 1 : 0) })
    case .exists:
      out.writeRESPInteger(arguments.dropFirst().reduce(0) { $0 + (store.exists($1) ? 1 : 0) })
    case .incr:
      switch store.increment(arguments[1]) {
      case .success(let value): out.writeRESPInteger(value)
      case .failure(let error): out.writeRESPError(error.message)
      }
    case .mget:
      out.writeRESPArrayHeader(arguments.count - 1)
      for key in arguments.dropFirst() {
        if let value = store.get(key) { out.writeRESPBulk(value) } else { out.writeRESPNull() }
      }
    case .publish: out.writeRESPInteger(pubsub.publish(arguments[2], to: arguments[1]))
    case .subscribe: subscribe(arguments.dropFirst(), before: &out)
    case .unsubscribe: unsubscribe(arguments.dropFirst(), into: &out)
    case .quit:
      out.writeRESPSimpleString("OK")
      return false
    }
    return true
  }

  private func ping(_ arguments: [ByteBuffer], into out: inout ByteBuffer) {
    if subscriber != nil && !channels.isEmpty {
      // In subscribed mode Redis answers with an array: "pong" and the argument (or "").
      out.writeRESPArrayHeader(2)
      out.writeRESPBulk("pong")
      if arguments.count > 1 { out.writeRESPBulk(arguments[1]) } else { out.writeRESPBulk("") }
    } else if arguments.count > 1 {
      out.writeRESPBulk(arguments[1])
    } else {
      out.writeRESPSimpleString("PONG")
    }
  }

  private func set(_ arguments: [ByteBuffer], into out: inout ByteBuffer) {
    var expiresAt: UInt64?
    var index = 3
    while index < arguments.count {
      let option = arguments[index].uppercasedASCII
      guard option == "EX" || option == "PX", expiresAt == nil, index + 1 < arguments.count else {
        out.writeRESPError("ERR syntax error")
        return
      }
      guard let amount = arguments[index + 1].decimalInteger else {
        out.writeRESPError("ERR value is not an integer or out of range")
        return
      }
      let unit: UInt64 = option == "EX" ? 1_000_000_000 : 1_000_000
      let (nanoseconds, overflow) = UInt64(clamping: amount).multipliedReportingOverflow(by: unit)
      guard amount > 0, !overflow else {
        out.writeRESPError("ERR invalid expire time in 'set' command")
        return
      }
      expiresAt = monotonicNanoseconds() + nanoseconds
      index += 2
    }
    store.set(arguments[1], to: arguments[2], expiresAt: expiresAt)
    out.writeRESPSimpleString("OK")
  }

  /// SUBSCRIBE: each confirmation is pushed before its subscription is registered, so it
  /// precedes every message of that channel. The replies already in `out` (earlier commands of
  /// the same batch, not yet written) are pushed first, the moment the connection starts to
  /// push.
  private mutating func subscribe(_ names: ArraySlice<ByteBuffer>, before out: inout ByteBuffer) {
    let subscriber: any RESPSubscriber
    if let existing = self.subscriber {
      subscriber = existing
    } else {
      subscriber = makeSubscriber()
      self.subscriber = subscriber
      if out.readableBytes > 0 {
        subscriber.push(out)
        out.moveReaderIndex(forwardBy: out.readableBytes)
      }
    }
    for name in names {
      var owned = allocator.buffer(capacity: name.readableBytes)  // not a slice of the request
      owned.writeImmutableBuffer(name)
      let isNew = channels.insert(owned).inserted
      var confirmation = allocator.buffer(capacity: 32 + name.readableBytes)
      confirmation.writeRESPArrayHeader(3)
      confirmation.writeRESPBulk("subscribe")
      confirmation.writeRESPBulk(name)
      confirmation.writeRESPInteger(channels.count)
      subscriber.push(confirmation)
      if isNew { pubsub.subscribe(subscriber, to: name) }
    }
  }

  /// UNSUBSCRIBE: the named channels, or all of them; one reply each (or one with a nil name
  /// when there was none), with the count left.
  private mutating func unsubscribe(_ names: ArraySlice<ByteBuffer>, into out: inout ByteBuffer) {
    let leaving = names.isEmpty ? Array(channels) : Array(names)
    if leaving.isEmpty {
      out.writeRESPArrayHeader(3)
      out.writeRESPBulk("unsubscribe")
      out.writeRESPNull()
      out.writeRESPInteger(0)
      return
    }
    for name in leaving {
      if channels.remove(name) != nil, let subscriber { pubsub.unsubscribe(subscriber, from: name) }
      out.writeRESPArrayHeader(3)
      out.writeRESPBulk("unsubscribe")
      out.writeRESPBulk(name)
      out.writeRESPInteger(channels.count)
    }
  }
}

extension ByteBuffer {
  /// The readable bytes as text for an error message: non-printable bytes as `?`.
  fileprivate var printable: String {
    String(
      decoding: readableBytesView.prefix(128).map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x3F },
      as: UTF8.self)
  }

  /// The readable bytes as upper-case ASCII text (SET's options).
  fileprivate var uppercasedASCII: String {
    String(decoding: readableBytesView.prefix(8), as: UTF8.self).uppercased()
  }
}
