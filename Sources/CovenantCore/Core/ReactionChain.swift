/// A cell's registered reactions: a singly linked chain through `Reaction.nextInChain`, each
/// link a retained reference (`ReactionBits`: the head owns the first reaction, each reaction's
/// link the next one). Only touched under the cell's lock.
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
  /// The first reaction; owns it (and, through the links, the rest).
  @usableFromInline var head = ReactionBits.none
  /// The last reaction, unretained: the link before it (or `head`) owns it.
  @usableFromInline var tail: Unmanaged<Reaction>? = nil
  /// Reactions given up since the last compaction (still linked).
  @usableFromInline var givenUp: UInt32 = 0
  /// The chain's length after the last compaction; 0 before any, so the first give-up in a
  /// chain compacts it (learning its length).
  @usableFromInline var lengthAtCompaction: UInt32 = 0

  /// The tag of a reaction's `nextInChain` that marks it given up.
  @usableFromInline static var givenUpMark: UInt { 1 }

  @inlinable init() {}

  @inlinable static func reaction(_ bits: ReactionBits) -> Reaction {
    bits.unmanaged.takeUnretainedValue()
  }

  /// Links `bits`, a reaction whose own link is empty, at the end; the chain owns it from here.
  @inlinable mutating func append(_ bits: ReactionBits) {
    assert(!bits.isNone && bits.tags == 0, "a reaction is appended untagged")
    if let tail {
      // Tagged: a given-up tail keeps its mark.
      let last = tail.takeUnretainedValue()
      let link = last.nextInChain.load(ordering: .relaxed)
      assert(link.isNone, "the tail of a chain links to nothing")
      last.nextInChain.store(bits.tagged(link.tags), ordering: .relaxed)
    } else {
      assert(head.isNone, "a chain without a tail is empty")
      head = bits
    }
    tail = bits.unmanaged
  }

  /// Empties the chain, returning its head (`none` when empty), whose ownership passes to the
  /// caller. Links may carry `givenUpMark`.
  @inlinable mutating func take() -> ReactionBits {
    let first = head
    self = ReactionChain()
    return first
  }

  /// Whether `bits` is the chain's last reaction.
  @inlinable func isTail(_ bits: ReactionBits) -> Bool {
    guard let tail else { return false }
    return bits.untagged.unsafeWord == UInt(bitPattern: tail.toOpaque())
  }

  /// Takes `bits`, a reaction linked here, out of the chain (`removed`: the caller releases it)
  /// or gives it up (see the type's comment). `unlinked`: the given-up reactions unlinked on the
  /// way (possibly `bits` itself), linked through `nextInChain`, retained: to tell, then
  /// release; `none` if none.
  @usableFromInline mutating func giveUp(_ bits: ReactionBits) -> (
    removed: Bool, unlinked: ReactionBits
  ) {
    let reaction = Self.reaction(bits)
    let link = reaction.nextInChain.load(ordering: .relaxed)
    assert(link.tags & Self.givenUpMark == 0, "a registration is given up once")
    guard bits == head else {
      reaction.nextInChain.store(link.tagged(Self.givenUpMark), ordering: .relaxed)
      givenUp &+= 1
      guard UInt64(givenUp) * 2 > UInt64(lengthAtCompaction) else { return (false, .none) }
      return (false, compact())
    }
    head = link
    if isTail(bits) { tail = nil }
    reaction.poisonLink()
    return (true, unlinkGivenUpHeads())
  }

  /// After the head was taken out: unlinks the given-up reactions now at the head.
  private mutating func unlinkGivenUpHeads() -> ReactionBits {
    var unlinked = ReactionBits.none
    while !head.isNone {
      let first = head
      let reaction = Self.reaction(first)
      let link = reaction.nextInChain.load(ordering: .relaxed)
      guard link.tags & Self.givenUpMark != 0 else { break }
      head = link.untagged
      if isTail(first) { tail = nil }
      reaction.nextInChain.store(unlinked, ordering: .relaxed)
      unlinked = first
      assert(givenUp > 0, "a chain counts the reactions given up in it")
      givenUp &-= 1
    }
    return unlinked
  }

  /// Unlinks every given-up reaction, in one walk.
  private mutating func compact() -> ReactionBits {
    var unlinked = ReactionBits.none
    var previous: Unmanaged<Reaction>?
    var current = head
    var length: UInt32 = 0
    while !current.isNone {
      let reaction = Self.reaction(current)
      let link = reaction.nextInChain.load(ordering: .relaxed)
      let next = link.untagged
      if link.tags & Self.givenUpMark != 0 {
        // `previous` is live: its link carries no mark to keep.
        if let previous {
          previous._withUnsafeGuaranteedRef { $0.nextInChain.store(next, ordering: .relaxed) }
        } else {
          head = next
        }
        reaction.nextInChain.store(unlinked, ordering: .relaxed)
        unlinked = current
      } else {
        length &+= 1
        previous = current.unmanaged
      }
      current = next
    }
    assert(head.isNone || head.tags == 0, "the head of a chain is never given up")
    tail = previous
    givenUp = 0
    lengthAtCompaction = length
    return unlinked
  }

  /// How many reactions are linked, given-up ones included.
  var count: Int {
    var count = 0
    var current = head
    while !current.isNone {
      count += 1
      current = Self.reaction(current).nextInChain.load(ordering: .relaxed).untagged
    }
    return count
  }
}
