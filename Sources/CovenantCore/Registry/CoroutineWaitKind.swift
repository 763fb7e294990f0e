/// What a coroutine (or generator) is waiting for, as its registry entry records it (six bits of
/// the entry's activity word; `CoroutineInfo.Wait` is what snapshots make of it).
@usableFromInline
enum CoroutineWaitKind: UInt8 {
  case none = 0
  /// A `Promise` or `CoFuture` (the entry's detail: the awaited object's type).
  case resolution = 1
  /// A channel receive or send (detail: the channel's type).
  case channelReceive = 2
  case channelSend = 3
  /// `select` over several cases.
  case select = 4
  /// `Coroutine.delay` (detail: the deadline, in uptime nanoseconds: `DispatchTime`'s clock).
  case delay = 5
  /// `Coroutine.await { callback in … }` (detail: the type of the value the callback delivers).
  case callback = 6
  /// `Coroutine.awaitAsync` (detail: the result type).
  case asyncBridge = 7
  case mutex = 8
  case semaphore = 9
  /// `CoScope.join()` or `CoFuture.join()`.
  case join = 10
  /// `Coroutine.yield()`: ready, back in its scheduler's queue.
  case yield = 11
  /// `scheduler.await { … }`: ready, on its way to another scheduler.
  case hop = 12
  /// Ready, waiting for its shared stack, which another coroutine is running on.
  case sharedStack = 13
  /// A generator suspended in `yield`, until its consumer asks for the next element.
  case generatorYield = 14

  /// Added to a kind whose wait also ends at a timeout.
  @usableFromInline static let timedFlag: UInt8 = 32

  /// The kind with the timed flag, when `timed`.
  @inlinable func raw(timed: Bool) -> UInt8 { rawValue | (timed ? Self.timedFlag : 0) }
}

/// The bits of a type's metadata pointer, for a registry entry's detail word
/// (`CoroutineSnapshotDescriptions.typeName` reads them back). `Any.Type` is one pointer: the
/// metadata, with no witness table (checked by the snapshot tests).
@inlinable @inline(__always)
func metadataBits(_ type: Any.Type) -> UInt {
  unsafeBitCast(type, to: UInt.self)
}
