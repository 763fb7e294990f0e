import Covenant
import CovenantTesting
import XCTest

final class WaitTests: XCTestCase {
  func testWaitReturnsValue() throws {
    XCTAssertEqual(try wait(for: Promise(3), timeout: 1), 3)
  }
}
