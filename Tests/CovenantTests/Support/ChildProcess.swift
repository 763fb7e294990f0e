import Foundation
import XCTest

/// Runs one test of this test binary in a child process, for behaviour that ends the process
/// (preconditions, stack overflow). The child test reads `variable` to know what to do.
enum ChildProcess {
  struct Outcome {
    let reason: Process.TerminationReason
    let status: Int32
    let stderr: String
  }

  /// Runs `test` ("Class/method") in a child copy of this binary with `variable=value` (and
  /// `extra` added to its environment).
  static func run(
    test: String, variable: String, value: String, extra: [String: String] = [:]
  ) throws -> Outcome {
    #if os(Linux)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      process.arguments = ["CovenantTests.\(test)"]
      var environment = ProcessInfo.processInfo.environment
      environment[variable] = value
      for (key, extraValue) in extra { environment[key] = extraValue }
      environment["SWIFT_BACKTRACE"] = "enable=no"
      process.environment = environment
      let stderr = Pipe()
      process.standardError = stderr
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      let output = String(
        decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      return Outcome(
        reason: process.terminationReason, status: process.terminationStatus, stderr: output)
    #else
      throw XCTSkip("child-process tests run on Linux")
    #endif
  }

  /// Asserts that the child stopped on a signal (a precondition trap) and printed `message`.
  static func expectCrash(
    test: String, variable: String, value: String, message: String,
    file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let outcome = try run(test: test, variable: variable, value: value)
    XCTAssertEqual(outcome.reason, .uncaughtSignal, outcome.stderr, file: file, line: line)
    XCTAssertTrue(outcome.stderr.contains(message), outcome.stderr, file: file, line: line)
  }
}
