import Covenant
import CovenantModel
import XCTest

/// Random `CoSemaphore`/`CoMutex` programs (waits, timed waits, tries, `withPermit`, awaits while
/// holding, scope deadlines cancelling some workers) checked for exact permit accounting: never
/// more holders than permits, each step ending exactly one way, every permit back at the end,
/// no hang, nothing kept alive. A failure prints the seed;
/// `COVENANT_SEED=<seed> swift test --filter SyncModelTests` replays that program.
final class SyncModelTests: XCTestCase {
  func testRandomSyncProgramsKeepTheirAccounting() {
    let plan = SeedPlan(count: TestScale.stress(400, sanitizerDivisor: 4))
    var operations = 0
    for seed in plan.seeds {
      let program = SyncProgram(seed: seed)
      let (done, failures) = SyncProgramRunner.run(program)
      operations += done
      if !failures.isEmpty {
        XCTFail(
          "\(SeedPlan.replayHint(seed))\n\(failures.joined(separator: "\n"))\nprogram: \(program)")
        return
      }
    }
    print(
      "sync programs: \(plan.seeds.count) checked, \(operations) steps, base seed \(SeedPlan.hex(plan.base))"
    )
  }
}
