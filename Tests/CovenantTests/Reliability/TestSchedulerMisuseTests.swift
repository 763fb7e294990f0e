import Covenant
import CovenantTesting
import Foundation
import XCTest

/// CovenantTesting's `TestScheduler` stops with a clear message when asked to move its clock
/// backwards or to run its tasks from inside one of them (each in a child process).
final class TestSchedulerMisuseTests: XCTestCase {
  private static let childVariable = "COVENANT_TEST_SCHEDULER_CHILD"

  func testMovingTheClockBackIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "TestSchedulerMisuseTests/testChildMisuse", variable: Self.childVariable,
      value: "backwards", message: "TestScheduler.advance(to:): 1000000000 ns is earlier than now")
  }

  func testNegativeAdvanceIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "TestSchedulerMisuseTests/testChildMisuse", variable: Self.childVariable,
      value: "negative", message: "TestScheduler.advance(by:) needs an interval of zero or more")
  }

  func testRunningFromOneOfItsTasksIsAPreconditionFailure() throws {
    try ChildProcess.expectCrash(
      test: "TestSchedulerMisuseTests/testChildMisuse", variable: Self.childVariable,
      value: "reentrant",
      message: "TestScheduler: run() and advance must not be called from the scheduler's tasks")
  }

  func testChildMisuse() {
    let scheduler = TestScheduler()
    switch ProcessInfo.processInfo.environment[Self.childVariable] {
    case "backwards":
      scheduler.advance(by: .seconds(2))
      scheduler.advance(to: .seconds(1))
    case "negative":
      scheduler.advance(by: .seconds(-1))
    case "reentrant":
      scheduler.scheduleTask { scheduler.run() }
      scheduler.run()
    default:
      return  // only meaningful in the child process spawned above
    }
    XCTFail("the child should have crashed")
  }
}
