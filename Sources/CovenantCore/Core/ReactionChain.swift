/// A cell's registered reactions: a singly linked chain through `Reaction.nextInChain`, each
/// link the bits of a retained reference. Only touched under the cell's lock.
///
/// A reaction whose await ended without the resolution (a cancelled or timed-out coroutine)
/// leaves the chain. At the head that is one step. Anywhere else the walk from the head to its
/// predecessor would make N awaiters given up in reverse order cost N² steps, and a reaction
/// has no room for a backward link (a coroutine's object fills its heap block to the byte), so
/// the reaction is *given up* instead: marked, in the low bit of its own link (`givenUpMark`;
/// objects are aligned), and left in place. A resolution tells it like the others (an ended
/// await ignores it); otherwise a *compaction* unlinks every given-up reaction in one walk, as
/// soon as more were given up than half the chain's length at the last compaction: constant
/// amortized time per give-up and per registration, and given-up reactions never outnumber
/// the live ones for long. The head is never a given-up reaction (taking one out of the head
/// takes the given-up ones behind it too), so a chain whose reactions have all given up is
/// empty.
@usableFromInline
struct ReactionChain: Sendable {
  @usableFromInline var head: UInt = 0
  @usableFromInline var tail: UInt = 0
  /// Reactions given up since the last compaction (still linked).
  @usableFromInline var givenUp: UInt32 = 0
  /// The chain's length after the last compaction; 0 before any, so the first give-up in a
  /// chain compacts it (learning its length).
  @usableFromInline var lengthAtCompaction: UInt32 = 0

  /// The bit of a reaction's `nextInChain` that marks it given up.
  @usableFromInline static var givenUpMark: UInt { 1 }

  @inlinable init() {}

  @inlinable static func reaction(_ bits: UInt) -> Reaction {
    Unmanaged<Reaction>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
  }

  @inlinable mutating func append(_ bits: UInt) {
    if tail != 0 {
      // Or'ed in: a given-up tail keeps its mark.
      let last = Self.reaction(tail)
      last.nextInChain.store(last.nextInChain.load(ordering: .relaxed) | bits, ordering: .relaxed)
    } else {
      head = bits
    }
    tail = bits
  }

  /// Empties the chain, returning its head (0 when empty). Links may carry `givenUpMark`.
  @inlinable mutating func take() -> UInt {
    let first = head
    self = ReactionChain()
    return first
  }

  /// Takes `bits`, a reaction linked here, out of the chain (`removed`: the caller releases it)
  /// or gives it up (see the type's comment). `unlinked`: the given-up reactions unlinked on the
  /// way (possibly `bits` itself), linked through `nextInChain`, retained: to tell, then
  /// release; 0 if none.
  @usableFromInline mutating func giveUp(_ bits: UInt) -> (removed: Bool, unlinked: UInt) {
    let reaction = Self.reaction(bits)
    let link = reaction.nextInChain.load(ordering: .relaxed)
    assert(link & Self.givenUpMark == 0, "a registration is given up once")
    guard bits == head else {
      reaction.nextInChain.store(link | Self.givenUpMark, ordering: .relaxed)
      givenUp &+= 1
      guard UInt64(givenUp) * 2 > UInt64(lengthAtCompaction) else { return (false, 0) }
      return (false, compact())
    }
    head = link
    if tail == bits { tail = 0 }
    return (true, unlinkGivenUpHeads())
  }

  /// After the head was taken out: unlinks the given-up reactions now at the head.
  private mutating func unlinkGivenUpHeads() -> UInt {
    var unlinked: UInt = 0
    while head != 0 {
      let first = head
      let reaction = Self.reaction(first)
      let link = reaction.nextInChain.load(ordering: .relaxed)
      guard link & Self.givenUpMark != 0 else { break }
      head = link & ~Self.givenUpMark
      if tail == first { tail = 0 }
      reaction.nextInChain.store(unlinked, ordering: .relaxed)
      unlinked = first
      givenUp &-= 1
    }
    return unlinked
  }

  /// Unlinks every given-up reaction, in one walk.
  private mutating func compact() -> UInt {
    var unlinked: UInt = 0
    var previous: UInt = 0
    var current = head
    var length: UInt32 = 0
    while current != 0 {
      let reaction = Self.reaction(current)
      let link = reaction.nextInChain.load(ordering: .relaxed)
      let next = link & ~Self.givenUpMark
      if link & Self.givenUpMark != 0 {
        // `previous` is live: its link carries no mark to keep.
        if previous == 0 {
          head = next
        } else {
          Self.reaction(previous).nextInChain.store(next, ordering: .relaxed)
        }
        reaction.nextInChain.store(unlinked, ordering: .relaxed)
        unlinked = current
      } else {
        length &+= 1
        previous = current
      }
      current = next
    }
    tail = previous
    givenUp = 0
    lengthAtCompaction = length
    return unlinked
  }

  /// How many reactions are linked, given-up ones included.
  var count: Int {
    var count = 0
    var current = head
    while current != 0 {
      count += 1
      current = Self.reaction(current).nextInChain.load(ordering: .relaxed) & ~Self.givenUpMark
    }
    return count
  }
}
