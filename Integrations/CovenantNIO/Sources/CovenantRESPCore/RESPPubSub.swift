import NIOCore
import Synchronization

/// The pub/sub registry both servers share: channel names to their subscribers.
///
/// Thread-safe. `publish` builds the message frame once and pushes the same buffer (shared, not
/// copied) to every subscriber, after releasing the lock: a subscriber's `push` never runs under
/// it.
public final class RESPPubSub: Sendable {
  private let channels = Mutex<[ByteBuffer: [ObjectIdentifier: any RESPSubscriber]]>([:])
  private let allocator = ByteBufferAllocator()

  /// An empty registry.
  public init() {}

  /// Adds `subscriber` to `channel` (a copy of the name is kept).
  public func subscribe(_ subscriber: any RESPSubscriber, to channel: ByteBuffer) {
    var name = allocator.buffer(capacity: channel.readableBytes)
    name.writeImmutableBuffer(channel)
    channels.withLock { $0[name, default: [:]][ObjectIdentifier(subscriber)] = subscriber }
  }

  /// Removes `subscriber` from `channel`.
  public func unsubscribe(_ subscriber: any RESPSubscriber, from channel: ByteBuffer) {
    channels.withLock { channels in
      guard let index = channels.index(forKey: channel) else { return }
      channels.values[index][ObjectIdentifier(subscriber)] = nil
      if channels.values[index].isEmpty { channels.remove(at: index) }
    }
  }

  /// Sends `message` to every subscriber of `channel`; how many there were (PUBLISH's reply).
  public func publish(_ message: ByteBuffer, to channel: ByteBuffer) -> Int {
    let subscribers = channels.withLock { channels in channels[channel].map { Array($0.values) } }
    guard let subscribers, !subscribers.isEmpty else { return 0 }
    var frame = allocator.buffer(
      capacity: 40 + channel.readableBytes + message.readableBytes)
    frame.writeRESPArrayHeader(3)
    frame.writeRESPBulk("message")
    frame.writeRESPBulk(channel)
    frame.writeRESPBulk(message)
    for subscriber in subscribers { subscriber.push(frame) }
    return subscribers.count
  }
}
