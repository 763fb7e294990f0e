import Dispatch

/// A coroutine's scheduler as one word, which a coroutine snapshot reads atomically from its
/// own thread:
/// - a `DispatchQueue`, the common case: the queue's retained bits (`UnsafeRetainedBits`, tag
///   clear), so that a dispatch reads the queue with one load and no retain;
/// - another scheduler: its identity (the address of a class scheduler, 0 for a value type)
///   with `otherTag` set. The word does not own that object: `otherScheduler` does.
///
/// A queue's identity is its address, so the word also gives every scheduler's identity (the
/// hand-off slot's key): one word where the coroutine used to keep two, the identity beside
/// the queue (the eight bytes the coroutine-local bindings took, with the object still within
/// its 192-byte heap block).
struct SchedulerWord: InlineAtomicValue, Equatable {
  /// The bits: retained queue bits, or an identity with `otherTag`.
  let raw: UInt

  /// Marks a word that is not a queue's (objects are at least 8-aligned: the low bits of an
  /// address are free, which `UnsafeRetainedBits` checks).
  static var otherTag: UInt { 1 }

  /// The word of a coroutine on `queue`, owning the retain `queue` carries.
  init(queue: UnsafeRetainedBits<DispatchQueue>) {
    assert(queue.tags == 0, "a queue's bits carry no tag")
    raw = queue.unsafeWord
  }

  /// The word of a coroutine on a scheduler that is not a `DispatchQueue`, whose identity is
  /// `identity` (`nil` for a value type).
  init(otherIdentity identity: ObjectIdentifier?) {
    let bits = identity.map { UInt(bitPattern: $0) } ?? 0
    assert(bits & Self.otherTag == 0, "an object's address has free low bits")
    raw = bits | Self.otherTag
  }

  /// The word of a coroutine that is on `scheduler` now, classified once
  /// (`classifyScheduler`): a queue is retained.
  init(identity: ObjectIdentifier?, queue: DispatchQueue?) {
    if let queue {
      self.init(queue: UnsafeRetainedBits(retaining: queue))
    } else {
      self.init(otherIdentity: identity)
    }
  }

  /// The queue's retained bits, or none when the scheduler is not a `DispatchQueue`.
  @inline(__always)
  var queue: UnsafeRetainedBits<DispatchQueue> {
    UnsafeRetainedBits(unsafeWord: raw & Self.otherTag == 0 ? raw : 0)
  }

  /// The scheduler's identity: the queue's or class scheduler's address; `nil` for a value
  /// type.
  @inline(__always)
  var identity: ObjectIdentifier? {
    let bits = raw & ~Self.otherTag
    // An `ObjectIdentifier` is the object's address, one word (the snapshot tests check the
    // layout); rebuilt without touching the object.
    return bits == 0 ? nil : unsafeBitCast(bits, to: ObjectIdentifier.self)
  }

  /// The address of a class scheduler that is not a queue (unowned), for a snapshot.
  var otherObjectAddress: UnsafeRawPointer? {
    raw & Self.otherTag == 0 ? nil : UnsafeRawPointer(bitPattern: raw & ~Self.otherTag)
  }
}
