import Covenant
import CovenantModel
import XCTest

/// Random programs of promise and future operations (the Promises and FuturesChannelsAndSelect articles), each checked against the
/// sequential reference model in CovenantModel. A failure prints the program's seed;
/// `COVENANT_SEED=<seed> swift test --filter PromiseModelTests` replays that program.
final class PromiseModelTests: XCTestCase {
  func testRandomPromiseProgramsMatchTheModel() {
    let plan = SeedPlan(count: 2_000)
    var operations = 0
    for seed in plan.seeds {
      let program = PromiseProgram(seed: seed)
      let report = PromiseProgramRunner.run(program)
      operations += report.operations
      if !report.failures.isEmpty {
        XCTFail(
          "\(SeedPlan.replayHint(seed))\n\(report.failures.joined(separator: "\n"))\n"
            + "program:\n\(program)")
        return
      }
    }
    print(
      "promise programs: \(plan.seeds.count) checked, \(operations) operations, base seed \(SeedPlan.hex(plan.base))"
    )
  }

  /// The generator is deterministic: the same seed builds the same program.
  func testSameSeedSameProgram() {
    let first = PromiseProgram(seed: 42).description
    XCTAssertEqual(first, PromiseProgram(seed: 42).description)
    XCTAssertNotEqual(first, PromiseProgram(seed: 43).description)
  }

  /// The model itself, on hand-checked cases (a model that accepted anything would pass above).
  func testModelOnKnownCases() {
    XCTAssertEqual(PromiseProgram.combine(.all([]), [.value(1), .error(3), .never]), [.error(3)])
    XCTAssertEqual(PromiseProgram.combine(.all([]), [.value(1), .never]), [.never])
    XCTAssertEqual(
      PromiseProgram.combine(.any([]), [.error(1), .error(2)]), [.error(1), .error(2)])
    XCTAssertEqual(PromiseProgram.combine(.race([]), [.never, .value(4)]), [.value(4)])
  }
}
