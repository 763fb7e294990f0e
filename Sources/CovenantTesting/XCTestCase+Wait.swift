#if canImport(XCTest)
  import Covenant
  import Foundation
  import XCTest

  // Inside an `XCTestCase`, the instance method `wait(for:timeout:)` (for expectations) hides
  // the free functions of this module; these members make `wait(for: promise)` and
  // `wait(for: future)` work there too.
  extension XCTestCase {
    /// Waits for `promise`; see the free function `wait(for:timeout:)`.
    public func wait<T>(
      for promise: Promise<T>, timeout: TimeInterval = 10, file: StaticString = #filePath,
      line: UInt = #line
    ) throws -> T {
      try CovenantTesting.wait(for: promise, timeout: timeout, file: file, line: line)
    }

    /// Waits for `future`; see the free function `wait(for:timeout:)`.
    public func wait<T>(
      for future: CoFuture<T>, timeout: TimeInterval = 10, file: StaticString = #filePath,
      line: UInt = #line
    ) throws -> T {
      try CovenantTesting.wait(for: future, timeout: timeout, file: file, line: line)
    }
  }
#endif
