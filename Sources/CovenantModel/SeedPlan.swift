import Foundation

/// Which programs a run checks: `count` programs from a fresh random base seed, or exactly the
/// one program named by `COVENANT_SEED` (as printed by a failure), to replay it.
public struct SeedPlan: Sendable {
  /// The seeds of the programs to run.
  public let seeds: [UInt64]
  /// True when replaying `COVENANT_SEED`.
  public let isReplay: Bool
  /// The base seed (the replayed seed when replaying).
  public let base: UInt64

  /// `count` programs, or the one in `COVENANT_SEED` (decimal or 0x-hex) if set.
  public init(count: Int, environment: [String: String] = ProcessInfo.processInfo.environment) {
    if let text = environment["COVENANT_SEED"], let seed = Self.parse(text) {
      seeds = [seed]
      isReplay = true
      base = seed
    } else {
      var system = SystemRandomNumberGenerator()
      let base = system.next()
      self.base = base
      seeds = (0..<count).map { programSeed(base: base, index: $0) }
      isReplay = false
    }
  }

  /// The text to print for a failing program.
  public static func replayHint(_ seed: UInt64) -> String {
    "seed \(hex(seed)); replay it with COVENANT_SEED=\(hex(seed))"
  }

  /// `seed` as 0x-hex.
  public static func hex(_ seed: UInt64) -> String { "0x" + String(seed, radix: 16) }

  private static func parse(_ text: String) -> UInt64? {
    text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
  }
}
