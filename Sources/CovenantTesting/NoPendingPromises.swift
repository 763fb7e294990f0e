import Covenant
import Foundation

/// Checks that no promise is left pending and no promise block is queued or running: waits
/// (running the current run loop, see `waitForPromises(timeout:)`) until
/// `DispatchGroup.promises` is empty.
///
/// Framework-neutral: call it at the end of a test, from XCTest or Swift Testing.
///
/// - Throws: `WaitTimeoutError` if the group is still not empty after `timeout` seconds —
///   typically a promise that was never resolved but is still referenced somewhere (a promise
///   nobody references leaves the group when it is deallocated); it names `file`:`line`, the
///   caller's line by default.
///
/// ```swift
/// func testLoadsProfile() throws {
///   XCTAssertEqual(try wait(for: model.loadProfile()).name, "Ada")
///   try expectNoPendingPromises()
/// }
/// ```
public func expectNoPendingPromises(
  timeout: TimeInterval = 1, file: StaticString = #filePath, line: UInt = #line
) throws {
  guard waitForPromises(timeout: timeout) else {
    throw WaitTimeoutError(
      subject: "DispatchGroup.promises (a promise left pending, or a promise block still running)",
      timeout: timeout, file: file, line: line)
  }
}

#if canImport(XCTest)
  import XCTest

  extension XCTestCase {
    /// Fails the test if a promise is left pending or a promise block is still queued or
    /// running after `timeout` seconds; see `expectNoPendingPromises(timeout:)`.
    public func assertNoPendingPromises(
      timeout: TimeInterval = 1, file: StaticString = #filePath, line: UInt = #line
    ) {
      do {
        try expectNoPendingPromises(timeout: timeout, file: file, line: line)
      } catch {
        XCTFail("\(error)", file: file, line: line)
      }
    }
  }
#endif
