import Covenant
import XCTest

final class ClassicStyleTests: XCTestCase {
  func testStateIsReadable() {
    let promise = Promise(7)
    XCTAssertEqual(promise.value, 7)
  }
}
