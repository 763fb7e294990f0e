import Covenant
import Foundation
import XCTest

/// Architecture.md, "Stack overflow": overflowing a coroutine stack hits the guard page; the process prints the
/// diagnostic and dies by the signal. Runs the overflow in a child copy of this test binary.
final class StackOverflowTests: XCTestCase {
  private static let childVariable = "COVENANT_STACK_OVERFLOW_CHILD"

  func testOverflowInCoroutineDiesWithDiagnostic() throws {
    try expectOverflow(mode: "dedicated", stackSize: 65_536)
  }

  func testOverflowOnASharedStackDiesWithDiagnostic() throws {
    try expectOverflow(mode: "shared", stackSize: Coroutine.defaultStackSize)
  }

  private func expectOverflow(mode: String, stackSize: Int) throws {
    let child = try ChildProcess.run(
      test: "StackOverflowTests/testChildOverflows", variable: Self.childVariable, value: mode)
    if TestScale.runsUnderSanitizer {
      // ASan/TSan handle the re-raised fault themselves and exit with a status instead.
      XCTAssertNotEqual(child.status, 0, child.stderr)
    } else {
      XCTAssertEqual(child.reason, .uncaughtSignal, child.stderr)
      XCTAssertTrue([SIGSEGV, SIGBUS].contains(child.status), "status \(child.status)")
    }
    XCTAssertTrue(
      child.stderr.contains("Covenant: coroutine stack overflow (stack size \(stackSize) bytes)"),
      child.stderr)
  }

  func testChildOverflows() throws {
    let mode = ProcessInfo.processInfo.environment[Self.childVariable]
    guard mode == "dedicated" || mode == "shared" else {
      return  // only meaningful in the child process spawned above
    }
    let queue = DispatchQueue(label: "overflow")
    if mode == "dedicated" {
      queue.startCoroutine(stackSize: 65_536) { print(recurse(0)) }
    } else {
      queue.startCoroutine(stackMode: .shared) { print(recurse(0)) }
    }
    Thread.sleep(forTimeInterval: 10)
    XCTFail("the child should have crashed")
  }
}

@inline(never)
private func recurse(_ depth: Int) -> Int {
  var frame = (depth, depth, depth, depth, depth, depth, depth, depth)
  withUnsafeMutablePointer(to: &frame) { blackHole($0) }
  return recurse(depth + 1) + frame.7
}

@inline(never)
private func blackHole(_ pointer: UnsafeMutableRawPointer) {
  _ = pointer.load(as: UInt8.self)
}
