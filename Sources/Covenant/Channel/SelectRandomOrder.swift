import Synchronization

/// A uniformly random order of `0..<count`, drawn lazily (Fisher–Yates, one index at a time).
/// Up to 16 indices are kept packed in one word (4 bits each), so the usual select allocates
/// nothing; more go in an array.
struct SelectRandomOrder {
  private var packed: UInt64 = 0
  private var large: [Int] = []
  private var remaining: Int
  private var bits: UInt64 = 0
  private var range: UInt64 = 0

  init(count: Int) {
    remaining = count
    if count <= 16 {
      for index in 0..<count { packed |= UInt64(index) << (4 * UInt64(index)) }
    } else {
      large = Array(0..<count)
    }
  }

  mutating func next() -> Int? {
    guard remaining > 0 else { return nil }
    let count = UInt64(remaining)
    if range < count {
      bits = SelectRandom.next()
      range = .max
    }
    let pick = Int(bits % count)
    bits /= count
    range /= count
    remaining -= 1
    // The pick leaves; the last remaining index takes its place.
    if large.isEmpty {
      let pickShift = 4 * UInt64(pick)
      let lastShift = 4 * UInt64(remaining)
      let chosen = Int((packed >> pickShift) & 0xF)
      let last = (packed >> lastShift) & 0xF
      packed = (packed & ~(0xF << pickShift)) | (last << pickShift)
      return chosen
    }
    large.swapAt(pick, remaining)
    return large.removeLast()
  }
}

/// The random numbers of `selectUnbiased`: SplitMix64 over a shared counter seeded once from
/// the system generator. Cheap (one atomic add), and good enough to pick among a few cases;
/// not for anything that needs unpredictability.
enum SelectRandom {
  private static let counter = Atomic<UInt64>(UInt64.random(in: .min ... .max))

  static func next() -> UInt64 {
    var z = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
