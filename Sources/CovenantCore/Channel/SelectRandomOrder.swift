/// A uniformly random order of `0..<count`, drawn lazily (Fisher–Yates, one index at a time),
/// for up to `maxCount` indices, kept packed in one word (4 bits each): no allocation.
@usableFromInline
struct SelectRandomOrder {
  @usableFromInline static var maxCount: Int { 16 }
  @usableFromInline var packed: UInt64 = 0
  @usableFromInline var remaining: Int
  /// Random bits not used yet, 32 per pick.
  @usableFromInline var bits: UInt64 = 0
  @usableFromInline var picksInBits = 0

  @inlinable init(count: Int) {
    precondition(count <= Self.maxCount)
    remaining = count
    for index in 0..<count { packed |= UInt64(index) << (4 * UInt64(index)) }
  }

  @inlinable mutating func next() -> Int? {
    guard remaining > 0 else { return nil }
    if picksInBits == 0 {
      bits = SelectRandom.next()
      picksInBits = 2
    }
    // A random index below `remaining` from 32 random bits, by multiplication (no division).
    let pick = UInt64(((bits & 0xFFFF_FFFF) &* UInt64(remaining)) >> 32)
    bits >>= 32
    picksInBits -= 1
    remaining -= 1
    // The pick leaves; the last remaining index takes its place.
    let chosen = (packed >> (4 * pick)) & 0xF
    let last = (packed >> (4 * UInt64(remaining))) & 0xF
    packed = (packed & ~(0xF << (4 * pick))) | (last << (4 * pick))
    return Int(chosen)
  }
}

/// The random numbers of `selectUnbiased`: SplitMix64 over a shared counter seeded once from
/// the system generator. Cheap (one atomic add), and good enough to pick among a few cases;
/// not for anything that needs unpredictability.
@usableFromInline
enum SelectRandom {
  private static let counter = InlineAtomic<UInt64>(UInt64.random(in: .min ... .max))

  @usableFromInline
  static func next() -> UInt64 {
    var z = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// The same numbers as a `RandomNumberGenerator`.
  @usableFromInline
  struct Generator: RandomNumberGenerator {
    @usableFromInline init() {}
    @usableFromInline mutating func next() -> UInt64 { SelectRandom.next() }
  }
}
