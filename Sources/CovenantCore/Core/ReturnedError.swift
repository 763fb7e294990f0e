import CCovenantShims

// google/promises turns every value a block returns into an Objective-C object; a value of a
// type declared as an error becomes an `NSError` there, and an `NSError` rejects. Standard value
// types (String, Int, Array, Data, …) bridge to `NSString`, `NSNumber` and friends instead, so
// they stay values even when a test module gives them a retroactive `Error` conformance. This
// file reproduces that observable rule on every platform, without Objective-C.

/// The error that a value returned by a `then` block (or passed to `Promise(_:)`) stands for,
/// or `nil` when the value is an ordinary value:
/// - result type `any Error` (or another error existential): the error it holds;
/// - a type declared as an error (an `enum`, `struct` or class conforming to `Error`,
///   `NSError`): the value itself;
/// - `Any` or another existential: decided by the dynamic type of what it holds, as above;
/// - anything else, including standard value types with a retroactive `Error` conformance
///   (`extension String: Error {}`) and optionals: `nil`.
///
/// Runs once per `then`: the decision is made once per type and cached, so the common path is
/// one relaxed atomic load and a compare, with no boxing.
@inlinable
func returnedError<R>(_ value: R) -> (any Error)? {
  switch ReturnedErrorDecisions.decision(for: value) {
  case ReturnedErrorDecision.value: return nil
  case ReturnedErrorDecision.error: return errorValue(value)
  default: return slowReturnedError(value)
  }
}

/// How values of one type are treated by `returnedError`. Raw values fit in the low bits of a
/// type metadata pointer (aligned to at least 8 bytes), so a decision and its type share one
/// word; 0 means "no decision cached".
@usableFromInline
enum ReturnedErrorDecision {
  /// Never an error.
  @usableFromInline static let value: UInt = 1
  /// Always an error (the type is declared as one, or is an error existential).
  @usableFromInline static let error: UInt = 2
  /// Depends on the dynamic type of each value (`Any` and other existentials).
  @usableFromInline static let dynamic: UInt = 3
  @usableFromInline static let mask: UInt = 7
}

/// A small lock-free cache from type to `ReturnedErrorDecision`: a fixed table of words, each
/// holding a type's metadata address with its decision in the low bits. A collision just
/// replaces the entry (the evicted type is decided again next time), and since every decision
/// is a pure function of the type, racing writers store the same thing.
///
/// The table's address lives in a global atomic of static storage (0 until the first decision
/// allocates the table), so the fast path has no lazy-global `swift_once` check: one load of the
/// address, one of the entry, a compare.
@usableFromInline
enum ReturnedErrorDecisions {
  @usableFromInline static let slotCount = 256

  /// The cached decision for values of type `R` (`value` is one), deciding and caching it on
  /// a miss.
  @inlinable
  static func decision<R>(for value: R) -> UInt {
    let key = UInt(bitPattern: ObjectIdentifier(R.self))
    let table = returnedErrorDecisionTable.load(ordering: .acquiring)
    if let slots = UnsafeMutablePointer<InlineAtomic<UInt>>(bitPattern: table) {
      let entry = slots[slot(of: key)].load(ordering: .relaxed)
      if entry & ~ReturnedErrorDecision.mask == key { return entry & ReturnedErrorDecision.mask }
    }
    return decideAndCache(value, key: key)
  }

  @inlinable
  static func slot(of key: UInt) -> Int {
    Int(truncatingIfNeeded: key >> 4 ^ key >> 12) & (slotCount - 1)
  }

  /// Decides for a type seen for the first time (or evicted) and caches the decision.
  @usableFromInline
  static func decideAndCache<R>(_ value: R, key: UInt) -> UInt {
    let decision = decide(value)
    table()[slot(of: key)].store(key | decision, ordering: .relaxed)
    return decision
  }

  /// The table, allocated by the first caller (a racing loser frees its own copy).
  static func table() -> UnsafeMutablePointer<InlineAtomic<UInt>> {
    let current = returnedErrorDecisionTable.load(ordering: .acquiring)
    if let slots = UnsafeMutablePointer<InlineAtomic<UInt>>(bitPattern: current) { return slots }
    let fresh = UnsafeMutablePointer<InlineAtomic<UInt>>.allocate(capacity: slotCount)
    for index in 0..<slotCount { (fresh + index).initialize(to: InlineAtomic(0)) }
    let (installed, winner) = returnedErrorDecisionTable.compareExchange(
      expected: 0, desired: UInt(bitPattern: fresh), ordering: .acquiringAndReleasing)
    if installed { return fresh }
    fresh.deinitialize(count: slotCount)
    fresh.deallocate()
    return UnsafeMutablePointer(bitPattern: winner)!
  }

  /// The decision for static type `R`, of which `value` is a value.
  static func decide<R>(_ value: R) -> UInt {
    let conformsToError = R.self is any Error.Type
    if R.self is AnyClass {
      // Subclasses of an error class are errors too; other classes are values.
      return conformsToError ? ReturnedErrorDecision.error : ReturnedErrorDecision.value
    }
    // Only an existential's values have a dynamic type other than the static one (classes,
    // whose values may be of a subclass, are handled above): the same answer for every value.
    if ObjectIdentifier(type(of: value as Any)) != ObjectIdentifier(R.self) {
      // `any Error` (also composed, `any Error & Sendable`) is an error whatever it holds;
      // `Any` and the like are decided per value.
      return conformsToError ? ReturnedErrorDecision.error : ReturnedErrorDecision.dynamic
    }
    guard conformsToError else { return ReturnedErrorDecision.value }
    return R.self is any BridgedStandardValue.Type
      ? ReturnedErrorDecision.value : ReturnedErrorDecision.error
  }
}

/// The address of `ReturnedErrorDecisions`' table, 0 until it is allocated; never freed. A word
/// of static storage (`GlobalAtomic`), initialised before the program starts.
@inlinable var returnedErrorDecisionTable: GlobalAtomic<UInt> {
  GlobalAtomic(COV_GLOBAL_ATOMIC_RETURNED_ERROR_TABLE)
}

/// `value` as an error, for a type decided to be one (a failed cast cannot happen; it would
/// mean the value is not an error after all).
@usableFromInline
func errorValue<R>(_ value: R) -> (any Error)? { value as? any Error }

/// The per-value path for `Any` and other non-error existentials: an error when what the
/// value holds is of a type declared as an error.
@usableFromInline
func slowReturnedError<R>(_ value: R) -> (any Error)? {
  guard let error = value as? any Error else { return nil }
  func decisionOfDynamicType<E: Error>(_ error: E) -> UInt {
    ReturnedErrorDecisions.decision(for: error)
  }
  // The dynamic type is concrete, so its decision is `value` or `error`, never `dynamic`.
  return decisionOfDynamicType(error) == ReturnedErrorDecision.error ? error : nil
}
