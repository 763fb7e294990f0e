/// What a stream's buffer does when it is full and another element arrives
/// (`CoChannel.Receiver.buffer(capacity:policy:)`, `BroadcastChannel` subscribers; Kotlin's
/// `BufferOverflow`).
public enum StreamBufferPolicy: Equatable, Sendable {
  /// Wait until there is room: the producer (the stage's coroutine, a broadcast's sender) is
  /// held back.
  case suspend
  /// Drop the oldest buffered element to make room: consumers get the latest elements.
  case dropOldest
  /// Drop the element that arrived: consumers get the earliest elements.
  case dropNewest
}
