import Covenant
import XCTest

private func produce(_ yield: (Int) throws -> Void) throws {
  for value in 1...3 { try yield(value) }
}

/// `yield` is a `Generator.Yield` value called like a function; bodies that need a real
/// function value get one through the second initializer.
final class GeneratorYieldFormsTests: XCTestCase {
  func testYieldPassedAsAFunctionValue() {
    let g = Generator<Int> { yield in try [1, 2, 3].forEach(yield) }
    XCTAssertEqual(Array(g), [1, 2, 3])
  }

  func testYieldCalledFromANestedClosure() {
    // swift-format-ignore: ReplaceForEachWithForLoop
    let g = Generator<Int> { yield in try [4, 5].forEach { try yield($0) } }
    XCTAssertEqual(Array(g), [4, 5])
  }

  func testNamedFunctionAsBody() {
    XCTAssertEqual(Array(Generator<Int>(produce)), [1, 2, 3])
  }

  func testShorthandArgumentBody() {
    let g = Generator<Int> { try produce($0) }
    XCTAssertEqual(Array(g), [1, 2, 3])
  }

  func testElementTypeInferredFromContext() {
    let g: Generator<String> = Generator { yield in try yield("a") }
    XCTAssertEqual(Array(g), ["a"])
  }

  func testCallAsFunctionReference() {
    let g = Generator<Int> { yield in try produce(yield.callAsFunction) }
    XCTAssertEqual(Array(g), [1, 2, 3])
  }

  func testFunctionFormDropUnwindsToo() {
    var deferRan = false
    do {
      let g = Generator<Int> { yield in
        defer { deferRan = true }
        try [1, 2, 3].forEach(yield)
      }
      XCTAssertEqual(g.next(), 1)
    }
    XCTAssertTrue(deferRan)
  }
}
