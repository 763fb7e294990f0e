import Covenant
import Foundation
import XCTest

/// Generator misuse that cannot throw stops the process with a clear precondition message
/// (the GeneratorsAndActors article). Each case runs in a child copy of this test binary.
final class GeneratorMisuseTests: XCTestCase {
  private static let childVariable = "COVENANT_GENERATOR_MISUSE_CHILD"

  func testReentrantNextIsAPreconditionFailure() throws {
    try expectChildCrash(
      scenario: "reentrant", message: "next() called from inside the generator's own body")
  }

  func testYieldingAgainAfterDropIsAPreconditionFailure() throws {
    try expectChildCrash(
      scenario: "yieldAfterDrop", message: "body called yield after its generator was dropped")
  }

  func testYieldOutsideTheBodyIsAPreconditionFailure() throws {
    try expectChildCrash(
      scenario: "yieldOutside", message: "yield called outside its generator's body")
  }

  func testChildMisuse() throws {
    switch ProcessInfo.processInfo.environment[Self.childVariable] {
    case "reentrant":
      let holder = GeneratorHolder()
      let g = Generator<Int> { yield in
        try yield(1)
        _ = holder.generator?.next()
        try yield(2)
      }
      holder.generator = g
      _ = g.next()
      _ = g.next()
    case "yieldAfterDrop":
      var g: Generator<Int>? = Generator<Int> { yield in
        do { try yield(1) } catch {}
        try yield(2)
      }
      _ = g?.next()
      g = nil
    case "yieldOutside":
      var escaped: Generator<Int>.Yield?
      let g = Generator<Int> { yield in
        escaped = yield
        try yield(1)
      }
      _ = g.next()
      try escaped?(2)
    default:
      return  // only meaningful in the child processes spawned above
    }
    XCTFail("the child should have crashed")
  }

  private func expectChildCrash(scenario: String, message: String) throws {
    try ChildProcess.expectCrash(
      test: "GeneratorMisuseTests/testChildMisuse", variable: Self.childVariable, value: scenario,
      message: message)
  }
}

private final class GeneratorHolder {
  weak var generator: Generator<Int>?
}
