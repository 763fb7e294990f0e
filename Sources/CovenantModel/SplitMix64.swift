/// SplitMix64: a tiny, fast, seedable generator, so that a failing random program can be
/// replayed from its seed (the outcome of thread interleavings is not replayable; the program is).
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator that produces the same sequence for the same `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A random integer in `range`.
  public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

  /// `true` with probability `percent` / 100.
  public mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

  /// A random element of a non-empty array.
  public mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
}

/// The seed of the N-th program of a run: runs differ by their base seed, programs by index.
public func programSeed(base: UInt64, index: Int) -> UInt64 {
  var generator = SplitMix64(seed: base ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
  return generator.next()
}
