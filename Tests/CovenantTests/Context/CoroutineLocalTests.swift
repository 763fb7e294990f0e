import Covenant
import CovenantTesting
import Foundation
import XCTest

private enum Locals {
  static let requestID = CoroutineLocal<String?>(default: nil)
  static let depth = CoroutineLocal<Int>(default: 0)
}

private struct LocalTestError: Error {}

/// Reading, binding, nesting and restoring: the thread's bindings and a coroutine's own.
final class CoroutineLocalTests: XCTestCase {
  func testDefaultOutsideAnyBinding() {
    XCTAssertNil(Locals.requestID.value)
    XCTAssertEqual(Locals.depth.value, 0)
  }

  func testThreadBindingNestsAndIsRestored() {
    let result = Locals.depth.withValue(1) { () -> [Int] in
      var seen = [Locals.depth.value]
      Locals.depth.withValue(2) { seen.append(Locals.depth.value) }
      seen.append(Locals.depth.value)
      return seen
    }
    XCTAssertEqual(result, [1, 2, 1])
    XCTAssertEqual(Locals.depth.value, 0)
  }

  func testThreadBindingIsRestoredWhenTheOperationThrows() {
    XCTAssertThrowsError(
      try Locals.requestID.withValue("a") { () throws -> Void in throw LocalTestError() })
    XCTAssertNil(Locals.requestID.value)
  }

  func testThreadBindingIsOnlyThisThreads() {
    let other = Box<String??>(nil)
    Locals.requestID.withValue("mine") {
      let done = DispatchSemaphore(value: 0)
      Thread {
        other.value = .some(Locals.requestID.value)
        done.signal()
      }.start()
      done.wait()
    }
    XCTAssertEqual(other.value, .some(nil))
  }

  func testCoroutineBindingNestsAndIsRestoredOnThrow() {
    let seen = Recorder<String>()
    coRun {
      XCTAssertNil(Locals.requestID.value)
      let result = try Locals.requestID.withValue("outer") { () throws -> Int in
        seen.append(Locals.requestID.value ?? "nil")
        do {
          try Locals.requestID.withValue("inner") { () throws -> Void in
            seen.append(Locals.requestID.value ?? "nil")
            try Coroutine.yield()
            seen.append(Locals.requestID.value ?? "nil")
            throw LocalTestError()
          }
        } catch is LocalTestError {
          seen.append(Locals.requestID.value ?? "nil")
        }
        return 7
      }
      XCTAssertEqual(result, 7)
      seen.append(Locals.requestID.value ?? "nil")
    }
    XCTAssertEqual(seen.elements, ["outer", "inner", "inner", "outer", "nil"])
  }

  func testValuesOfManyLocalsAreIndependent() {
    coRun {
      Locals.depth.withValue(3) {
        Locals.requestID.withValue("r") {
          XCTAssertEqual(Locals.depth.value, 3)
          XCTAssertEqual(Locals.requestID.value, "r")
          Locals.depth.withValue(4) {
            XCTAssertEqual(Locals.depth.value, 4)
            XCTAssertEqual(Locals.requestID.value, "r")
          }
        }
      }
    }
  }

  func testDescriptionShowsTheValueReadHere() {
    Locals.depth.withValue(9) {
      XCTAssertEqual(Locals.depth.description, "CoroutineLocal<Int>(9)")
    }
  }
}
