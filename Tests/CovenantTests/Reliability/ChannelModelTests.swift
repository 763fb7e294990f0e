import Covenant
import CovenantModel
import XCTest

/// Random channel programs (the FuturesChannelsAndSelect article) checked for FIFO per sender, no duplicates, every element
/// received once or reported undelivered, the right ending, and no hang. A failure prints the
/// seed; `COVENANT_SEED=<seed> swift test --filter ChannelModelTests` replays that program.
final class ChannelModelTests: XCTestCase {
  func testRandomChannelProgramsKeepTheirInvariants() {
    let plan = SeedPlan(count: 1_000)
    var operations = 0
    for seed in plan.seeds {
      let program = ChannelProgram(seed: seed)
      let (done, failures) = ChannelProgramRunner.run(program)
      operations += done
      if !failures.isEmpty {
        XCTFail(
          "\(SeedPlan.replayHint(seed))\n\(failures.joined(separator: "\n"))\nprogram: \(program)")
        return
      }
    }
    print(
      "channel programs: \(plan.seeds.count) checked, \(operations) operations, base seed \(SeedPlan.hex(plan.base))"
    )
  }
}
