import Covenant
import CovenantTesting
import XCTest

/// `map`, `compactMap` and `filter`: stages without state, run inside each receive.
final class MapFilterTests: XCTestCase {
  func testMapFilterCompactMapTransformInOrderAndEndWithTheBase() {
    let source = filledChannel(Array(1...10))
    let result = drain(
      source.receiver.map { $0 * 3 }.filter { $0.isMultiple(of: 2) }
        .compactMap { $0 > 20 ? nil : "\($0)" })
    XCTAssertEqual(result.elements, ["6", "12", "18"])
    XCTAssertTrue(result.endedClosed)
  }
}
