import Covenant
import Foundation
import XCTest

/// SPEC §3.2: overflowing a coroutine stack hits the guard page; the process prints the
/// diagnostic and dies by the signal. Runs the overflow in a child copy of this test binary.
final class StackOverflowTests: XCTestCase {
  private static let childVariable = "COVENANT_STACK_OVERFLOW_CHILD"

  func testOverflowInCoroutineDiesWithDiagnostic() throws {
    #if os(Linux)
      let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      let process = Process()
      process.executableURL = executable
      process.arguments = ["CovenantTests.StackOverflowTests/testChildOverflows"]
      var environment = ProcessInfo.processInfo.environment
      environment[Self.childVariable] = "1"
      environment["SWIFT_BACKTRACE"] = "enable=no"
      process.environment = environment
      let stderr = Pipe()
      process.standardError = stderr
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      let output = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      if TestScale.runsUnderSanitizer {
        // ASan/TSan handle the re-raised fault themselves and exit with a status instead.
        XCTAssertNotEqual(process.terminationStatus, 0, output)
      } else {
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, output)
        XCTAssertTrue(
          [SIGSEGV, SIGBUS].contains(process.terminationStatus),
          "status \(process.terminationStatus)")
      }
      XCTAssertTrue(
        output.contains("Covenant: coroutine stack overflow (stack size 65536 bytes)"), output)
    #else
      throw XCTSkip("child-process overflow test runs on Linux")
    #endif
  }

  func testChildOverflows() throws {
    guard ProcessInfo.processInfo.environment[Self.childVariable] == "1" else {
      return  // only meaningful in the child process spawned above
    }
    let queue = DispatchQueue(label: "overflow")
    queue.startCoroutine(stackSize: 65_536) {
      print(recurse(0))
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
