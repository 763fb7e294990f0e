/// A strong reference kept as the bits of the object's address: in an atomic word, a link of a
/// chain, a word shared with flags. The bits *own* one retain of the object, which exactly one
/// `take()` or `release()` must give back; nothing else does, and nothing stops a second one.
/// That is the hazard the name carries: a missed take leaks the object, a second take (or a
/// take of bits someone else took) frees it under its other owners. Every word of Covenant that
/// holds a retained reference holds one of these, so each of those places says so in its type,
/// and its ownership moves only through the operations below.
///
/// - `init(retaining:)` makes bits that own a new retain;
/// - `borrow(_:)` and `unmanaged` use the object without touching its reference count (the
///   bits keep owning it);
/// - `take()` turns the bits back into a strong reference, `release()` gives the retain back:
///   after either, these bits and every copy of them are spent.
///
/// Up to three low bits are free for tags (objects are at least 8-aligned): flags stored in the
/// same word, such as a given-up mark or a "finished" state (`tagged(_:)`, `tags`).
///
/// Debug builds check the balance two ways. A take or release of bits without an object (none,
/// or the `poisoned` value a holder leaves behind once it took its bits) stops the program with
/// a message; and `RetainedBitsLedger` counts the retains made and not yet given back, which
/// the tests read before and after a workload. Release builds compile both away: the
/// operations are the `Unmanaged` calls they stand for.
@frozen @usableFromInline
package struct UnsafeRetainedBits<Object: AnyObject>: InlineAtomicValue, Equatable {
  /// The object's address with the tags in its low bits; 0 (with tags) for none.
  @usableFromInline package let unsafeWord: UInt

  /// Bits read back from where they were stored (a word, a C context): they carry the
  /// ownership that was stored there, no more.
  @inlinable @inline(__always)
  package init(unsafeWord: UInt) { self.unsafeWord = unsafeWord }

  /// Bits that own a new retain of `object`.
  @inlinable @inline(__always)
  package init(retaining object: Object) {
    unsafeWord = UInt(bitPattern: Unmanaged.passRetained(object).toOpaque())
    RetainedBitsLedger.noteRetained()
  }

  /// Bits that own a new retain of the object `unmanaged` refers to.
  @inlinable @inline(__always)
  package init(retaining unmanaged: Unmanaged<Object>) {
    unsafeWord = UInt(bitPattern: unmanaged.retain().toOpaque())
    RetainedBitsLedger.noteRetained()
  }

  /// The bits of a retained reference that another holder owns (a link of a chain), found
  /// from the object: to compare with that holder's bits, and to give its retain back once it
  /// has been taken out of that holder.
  @inlinable @inline(__always)
  package init(ownedElsewhere unmanaged: Unmanaged<Object>) {
    unsafeWord = UInt(bitPattern: unmanaged.toOpaque())
  }

  /// The same bits (and ownership), for an object known to be an `Other`: where a word holds
  /// an object whose type the code that stores or releases it does not name (unspecialized
  /// code).
  @inlinable @inline(__always)
  package func assumingObject<Other: AnyObject>(_ type: Other.Type) -> UnsafeRetainedBits<Other> {
    UnsafeRetainedBits<Other>(unsafeWord: unsafeWord)
  }

  /// A C function's context pointer that carries these bits (and their ownership).
  @inlinable @inline(__always)
  package var unsafeContext: UnsafeMutableRawPointer {
    assertHoldsObject("passed")
    return UnsafeMutableRawPointer(bitPattern: unsafeWord)!
  }

  /// The bits a C function's context pointer carries (see `unsafeContext`).
  @inlinable @inline(__always)
  package init(unsafeContext: UnsafeMutableRawPointer?) {
    unsafeWord = UInt(bitPattern: unsafeContext)
  }

  /// No object: a word that owns nothing.
  @inlinable @inline(__always)
  package static var none: Self { Self(unsafeWord: 0) }

  /// What a holder may leave in a word whose bits it took, in debug builds, so that a second
  /// take of that word stops the program instead of freeing the object again: an address no
  /// object has (not canonical on x86_64 and arm64), without tags.
  @inlinable @inline(__always)
  package static var poisoned: Self { Self(unsafeWord: 0xDEAD_0000_DEAD_0000) }

  /// The low bits free for tags.
  @inlinable @inline(__always)
  package static var tagMask: UInt { 7 }

  /// The tags stored with the bits.
  @inlinable @inline(__always)
  package var tags: UInt { unsafeWord & Self.tagMask }

  /// The same bits (and ownership) with `tags` set as well.
  @inlinable @inline(__always)
  package func tagged(_ tags: UInt) -> Self {
    assert(tags & ~Self.tagMask == 0, "a tag of retained bits must fit in their low three bits")
    return Self(unsafeWord: unsafeWord | tags)
  }

  /// The same bits (and ownership) without tags.
  @inlinable @inline(__always)
  package var untagged: Self { Self(unsafeWord: unsafeWord & ~Self.tagMask) }

  /// Whether there is no object (whatever the tags).
  @inlinable @inline(__always)
  package var isNone: Bool { unsafeWord & ~Self.tagMask == 0 }

  /// Whether these bits refer to the same object as `other`, ignoring tags.
  @inlinable @inline(__always)
  package func refersToSameObject(as other: Self) -> Bool {
    (unsafeWord ^ other.unsafeWord) & ~Self.tagMask == 0
  }

  /// The object, unretained: valid while these bits (or another owner) keep it.
  @inlinable @inline(__always)
  package var unmanaged: Unmanaged<Object> {
    assertHoldsObject("used")
    return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: unsafeWord & ~Self.tagMask)!)
  }

  /// Runs `body` with the object, without touching its reference count: the bits keep owning
  /// it for the duration of the call.
  @inlinable @inline(__always)
  package func borrow<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
    try unmanaged._withUnsafeGuaranteedRef(body)
  }

  /// The owned retain, back as a strong reference. These bits, and every copy of them, are
  /// spent.
  @inlinable @inline(__always)
  package func take() -> Object {
    assertHoldsObject("taken")
    RetainedBitsLedger.noteGivenBack()
    return unmanaged.takeRetainedValue()
  }

  /// Gives the owned retain back. These bits, and every copy of them, are spent.
  @inlinable @inline(__always)
  package func release() {
    assertHoldsObject("released")
    RetainedBitsLedger.noteGivenBack()
    unmanaged.release()
  }

  /// Stops a debug build when there is no object to use or give back: none, or bits a holder
  /// poisoned after taking them (so they were taken twice).
  @inlinable @inline(__always)
  func assertHoldsObject(_ what: StaticString) {
    assert(!isNone, "retained bits without an object \(what): never stored, or taken already")
    assert(
      untagged != Self.poisoned,
      "retained bits \(what) after their holder gave them away: taken twice")
  }
}

extension UnsafeRetainedBits: Sendable where Object: Sendable {}

/// The debug-only count of the retains that `UnsafeRetainedBits` made and that were not given
/// back yet: after a workload that leaves nothing alive, it is back where it was (the tests
/// check this, `RetainedBitsTests`). Relaxed atomic updates, so that ThreadSanitizer sees no
/// synchronisation the code under test does not make itself. Release builds never touch it.
@usableFromInline
package enum RetainedBitsLedger {
  @usableFromInline static let outstandingCount = InlineAtomic<Int>(0)

  /// Retains made and not yet given back (debug builds; 0 in release builds).
  package static var outstanding: Int { outstandingCount.load(ordering: .relaxed) }

  /// Whether the count is kept (debug builds).
  package static var isCounting: Bool { _isDebugAssertConfiguration() }

  @inlinable @inline(__always)
  static func noteRetained() {
    if _isDebugAssertConfiguration() { outstandingCount.wrappingAdd(1, ordering: .relaxed) }
  }

  @inlinable @inline(__always)
  static func noteGivenBack() {
    if _isDebugAssertConfiguration() { outstandingCount.wrappingAdd(-1, ordering: .relaxed) }
  }
}
