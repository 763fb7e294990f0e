import NIOCore

/// The commands both servers implement, recognised from a command's first argument without
/// allocating (ASCII, case-insensitive, as Redis does).
public enum RESPCommandName: Sendable {
  case ping, echo, set, get, del, exists, incr, mget, subscribe, unsubscribe, publish, quit

  /// The command named by `name`, or nil for a command this server does not know.
  @inlinable
  public init?(_ name: ByteBuffer) {
    let found: RESPCommandName? = name.withUnsafeReadableBytes { bytes in
      // Upper-cased ASCII letters packed little-endian into two words (names here are at most
      // 11 bytes): one comparison per candidate instead of a byte loop. The constants are the
      // names packed the same way ("GET" is 0x544547).
      guard bytes.count >= 3 && bytes.count <= 11 else { return nil }
      var low: UInt64 = 0
      var high: UInt64 = 0
      for index in 0..<bytes.count {
        var byte = bytes[index]
        if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") { byte -= 32 }
        if index < 8 {
          low |= UInt64(byte) << (8 * UInt64(index))
        } else {
          high |= UInt64(byte) << (8 * UInt64(index - 8))
        }
      }
      switch (bytes.count, low, high) {
      case (3, 0x544547, 0x0): return .get
      case (3, 0x544553, 0x0): return .set
      case (3, 0x4C4544, 0x0): return .del
      case (4, 0x474E_4950, 0x0): return .ping
      case (4, 0x4F48_4345, 0x0): return .echo
      case (4, 0x5243_4E49, 0x0): return .incr
      case (4, 0x5445_474D, 0x0): return .mget
      case (4, 0x5449_5551, 0x0): return .quit
      case (6, 0x5354_5349_5845, 0x0): return .exists
      case (7, 0x48_5349_4C42_5550, 0x0): return .publish
      case (9, 0x4249_5243_5342_5553, 0x45): return .subscribe
      case (11, 0x5243_5342_5553_4E55, 0x454249): return .unsubscribe
      default: return nil
      }
    }
    guard let found else { return nil }
    self = found
  }

  /// The lower-case name Redis uses in its error messages.
  public var errorName: String {
    switch self {
    case .ping: "ping"
    case .echo: "echo"
    case .set: "set"
    case .get: "get"
    case .del: "del"
    case .exists: "exists"
    case .incr: "incr"
    case .mget: "mget"
    case .subscribe: "subscribe"
    case .unsubscribe: "unsubscribe"
    case .publish: "publish"
    case .quit: "quit"
    }
  }

  /// Whether `count` arguments (the name included) are a valid call, Redis's arity rules.
  public func accepts(argumentCount count: Int) -> Bool {
    switch self {
    case .ping: count <= 2
    case .echo, .get, .incr: count == 2
    case .set: count >= 3
    case .del, .exists, .mget, .subscribe: count >= 2
    case .unsubscribe: count >= 1
    case .publish: count == 3
    case .quit: true
    }
  }
}
