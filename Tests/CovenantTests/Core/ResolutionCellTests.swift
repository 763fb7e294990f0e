import CovenantCore
import Dispatch
import XCTest

/// The storage rules of `ResolutionCell` (Architecture.md, "The promise core: cells and
/// reactions"), checked on the cell itself: which values live in its three words and which in
/// a box, that every value and error it stores is released exactly once, that a copy read out
/// of it is a proper copy (references retained, `weak` fields working), that readers on many
/// threads see one value, and that the cell sits where reactions look for it in its owner.
final class ResolutionCellTests: XCTestCase {
  override func tearDown() {
    XCTAssertEqual(Tracked.live.load(ordering: .sequentiallyConsistent), 0, "an object leaked")
    super.tearDown()
  }

  // MARK: Values of every size, inline and boxed

  func testValuesUpToThreeWordsAreInlineAndReleasedOnce() {
    checkValue(Empty(), inline: true, trackedPerValue: 0)
    checkValue(UInt8(7), inline: true, trackedPerValue: 0)
    checkValue(Tracked(), inline: true, trackedPerValue: 1)
    checkValue(Optional(Tracked()), inline: true, trackedPerValue: 1)
    checkValue((Tracked(), 5), inline: true, trackedPerValue: 1)
    checkValue("a string too long for the small-string form", inline: true, trackedPerValue: 0)
    checkValue([Tracked(), Tracked()], inline: true, trackedPerValue: 2)
    checkValue((Tracked(), Tracked(), Tracked()), inline: true, trackedPerValue: 3)
    checkValue(Optional((Tracked(), Tracked(), Tracked())), inline: true, trackedPerValue: 3)
  }

  func testLargerValuesAreBoxedAndReleasedOnce() {
    checkValue((Tracked(), 1, 2, UInt8(3)), inline: false, trackedPerValue: 1)  // 25 bytes
    checkValue((Tracked(), 1, 2, Tracked()), inline: false, trackedPerValue: 2)  // 32 bytes
    checkValue((Tracked(), 1, 2, 3, Tracked()), inline: false, trackedPerValue: 2)  // 40 bytes
    checkValue((Tracked(), 1, 2, 3, 4, Tracked()), inline: false, trackedPerValue: 2)  // 48 bytes
  }

  func testSixteenByteAlignedValuesAreBoxed() {
    XCTAssertEqual(MemoryLayout<Aligned16>.alignment, 16)
    checkValue(Aligned16(vector: SIMD2(1, 2), object: Tracked()), inline: false, trackedPerValue: 1)
  }

  func testWeakFieldsSurviveTheCell() {
    let object = Tracked()
    let owner = CellOwner<WeakField>()
    XCTAssertNotNil(owner.cell.fulfill(WeakField(object: object, strong: Tracked())))
    XCTAssertEqual(
      ResolutionCell.storesInline(WeakField.self), _isBitwiseTakable(WeakField.self),
      "a value that is not bitwise-takable must be boxed")
    XCTAssertTrue(owner.cell.loadValue(as: WeakField.self).object === object)
    let copy = owner.cell.loadValue(as: WeakField.self)
    withExtendedLifetime(object) {}
    XCTAssertTrue(copy.object === object)
    // (`object` is released after its last use above; the copies' weak fields then read nil.)
  }

  func testWeakFieldReadsNilOnceItsObjectIsGone() {
    let owner = CellOwner<WeakField>()
    do {
      let object = Tracked()
      XCTAssertNotNil(owner.cell.fulfill(WeakField(object: object, strong: Tracked())))
      XCTAssertTrue(owner.cell.loadValue(as: WeakField.self).object === object)
    }
    XCTAssertNil(owner.cell.loadValue(as: WeakField.self).object)
  }

  // MARK: Errors

  func testErrorsWithPayloadsAreReleasedOnce() {
    checkError(PayloadError.failed(Tracked()), trackedPerError: 1)
    checkError(
      WideError(a: Tracked(), b: Tracked(), c: Tracked(), d: Tracked()), trackedPerError: 4)
    checkError(ClassError(), trackedPerError: 1)
    checkError(CoFutureError.canceled, trackedPerError: 0)
  }

  /// Promises and futures made resolved read their payload back. The payload crosses a scratch
  /// buffer reached through a laundered pointer (`ResolutionCell.withScratchWords`); without
  /// it, the optimizer forwarded the buffer's initial zeros past the typed store, and
  /// `Promise(error).error` crashed in release builds (CI runs this suite with `-c release`).
  func testPayloadsStoredAtCreationReadBack() {
    XCTAssertEqual(Promise<Int>(MadeResolvedError.failed).error as? MadeResolvedError, .failed)
    XCTAssertEqual(
      Promise<Int>(MadeResolvedError.code(7)).error as? MadeResolvedError, .code(7))
    XCTAssertEqual(Promise(-42).value, -42)
    XCTAssertEqual(
      Promise("more than fifteen bytes of text").value, "more than fifteen bytes of text")
    XCTAssertEqual(Promise((1, 2, 3)).value.map { [$0.0, $0.1, $0.2] }, [1, 2, 3])
    XCTAssertEqual(Promise([4, 5]).value, [4, 5])
    XCTAssertEqual(try CoFuture(result: .success(9)).result?.get(), 9)
    guard
      case .failure(let error)? = CoFuture<Int>(result: .failure(MadeResolvedError.failed)).result
    else { return XCTFail("not failed") }
    XCTAssertEqual(error as? MadeResolvedError, .failed)
  }

  // MARK: Readers

  /// Many threads read a resolved cell at once: each gets a proper copy, and the value is
  /// released once, after the last reader.
  func testConcurrentReadersOfAResolvedCell() {
    let owner = CellOwner<(Tracked, [Tracked], String)>()
    let value = (Tracked(), [Tracked(), Tracked()], "shared by every reader of the cell")
    XCTAssertNotNil(owner.cell.fulfill(value))
    DispatchQueue.concurrentPerform(iterations: 8) { _ in
      for _ in 0..<TestScale.stress(20_000) {
        let copy = owner.cell.loadValue(as: (Tracked, [Tracked], String).self)
        precondition(copy.0 === value.0 && copy.1.count == 2 && copy.2 == value.2)
      }
    }
    XCTAssertEqual(Tracked.live.load(ordering: .sequentiallyConsistent), 3)
  }

  /// Readers polling a pending cell see either nothing or the whole value, never a part of it.
  func testReadersRacingTheResolution() {
    for _ in 0..<TestScale.stress(200) {
      let owner = CellOwner<(Tracked, Tracked, Int)>()
      let value = (Tracked(), Tracked(), 42)
      let group = DispatchGroup()
      for _ in 0..<3 {
        DispatchQueue.global().async(group: group) {
          while true {
            guard let result = owner.cell.result(as: (Tracked, Tracked, Int).self) else { continue }
            let read = try! result.get()
            precondition(read.0 === value.0 && read.1 === value.1 && read.2 == 42)
            return
          }
        }
      }
      XCTAssertNotNil(owner.cell.fulfill(value))
      group.wait()
    }
  }

  /// Only the first resolution counts; a later value or error is released at once.
  func testLaterResolutionsAreIgnoredAndReleased() {
    let owner = CellOwner<Tracked>()
    let first = Tracked()
    XCTAssertNotNil(owner.cell.fulfill(first))
    XCTAssertNil(owner.cell.fulfill(Tracked()))
    XCTAssertNil(owner.cell.reject(PayloadError.failed(Tracked())))
    XCTAssertTrue(owner.cell.loadValue(as: Tracked.self) === first)
  }

  // MARK: The cell in its owner

  func testTheCellSitsWhereReactionsLookForIt() {
    XCTAssertLessThanOrEqual(MemoryLayout<ResolutionCell>.alignment, MemoryLayout<UInt>.alignment)
    let promise = Promise<Int>()
    let future = CoFuture<String>(result: .success("x"))
    let coPromise = CoPromise<[Int]>()
    func address<Owner: AnyObject>(of owner: Owner, _ cell: borrowing ResolutionCell) -> Bool {
      withUnsafePointer(to: cell) { UnsafeRawPointer($0) }
        == ResolutionCell.address(in: Unmanaged.passUnretained(owner))
    }
    XCTAssertTrue(address(of: promise, promise.cell))
    XCTAssertTrue(address(of: future, future.cell))
    XCTAssertTrue(address(of: coPromise, coPromise.cell))
    promise.fulfill(1)
    coPromise.success([])
  }

  // MARK: Helpers

  /// Stores `value` in a cell, reads copies back, and checks where it was stored and that every
  /// object it holds is released exactly once when the cell and the copies are gone.
  private func checkValue<Value>(
    _ value: @autoclosure () -> Value, inline: Bool, trackedPerValue: Int,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(
      ResolutionCell.storesInline(Value.self), inline, "\(Value.self)", file: file, line: line)
    let before = Tracked.live.load(ordering: .sequentiallyConsistent)
    do {
      let owner = CellOwner<Value>()
      XCTAssertNotNil(owner.cell.fulfill(value()), file: file, line: line)
      let copies = (0..<3).map { _ in owner.cell.loadValue(as: Value.self) }
      XCTAssertEqual(copies.count, 3)
      XCTAssertNotNil(try? owner.cell.result(as: Value.self)?.get(), file: file, line: line)
      XCTAssertEqual(
        Tracked.live.load(ordering: .sequentiallyConsistent), before + trackedPerValue,
        "\(Value.self): the cell must hold its value's objects (and copies must share them)",
        file: file, line: line)
    }
    XCTAssertEqual(
      Tracked.live.load(ordering: .sequentiallyConsistent), before,
      "\(Value.self): released exactly once", file: file, line: line)
  }

  private func checkError(
    _ error: @autoclosure () -> any Error, trackedPerError: Int,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let before = Tracked.live.load(ordering: .sequentiallyConsistent)
    do {
      let owner = CellOwner<Int>()
      let stored = error()
      XCTAssertNotNil(owner.cell.reject(stored), file: file, line: line)
      let copies = (0..<3).map { _ in owner.cell.loadError() }
      XCTAssertEqual(
        String(describing: copies[2]), String(describing: stored), file: file, line: line)
      guard case .failure = owner.cell.result(as: Int.self) else {
        return XCTFail("not rejected", file: file, line: line)
      }
      XCTAssertEqual(
        Tracked.live.load(ordering: .sequentiallyConsistent), before + trackedPerError,
        file: file, line: line)
    }
    XCTAssertEqual(
      Tracked.live.load(ordering: .sequentiallyConsistent), before,
      "\(type(of: error())): released exactly once", file: file, line: line)
  }
}

/// An owner of a cell, as `Promise` and `CoFuture` are: the cell first, its payload destroyed
/// with the owner's value type.
private final class CellOwner<Value>: @unchecked Sendable {
  let cell = ResolutionCell()
  deinit { cell.destroyPayload(as: Value.self) }
}

/// Counts its live instances, to check releases.
private final class Tracked: @unchecked Sendable {
  static let live = InlineAtomic<Int>(0)
  init() { Self.live.wrappingAdd(1, ordering: .sequentiallyConsistent) }
  deinit { Self.live.wrappingAdd(-1, ordering: .sequentiallyConsistent) }
}

private struct Empty {}

private struct Aligned16 {
  var vector: SIMD2<Double>
  var object: Tracked
}

private struct WeakField {
  weak var object: Tracked?
  var strong: Tracked
}

private enum PayloadError: Error {
  case failed(Tracked)
}

/// An error too wide for an existential's inline buffer.
private struct WideError: Error {
  let a: Tracked
  let b: Tracked
  let c: Tracked
  let d: Tracked
}

private final class ClassError: Error {
  let object = Tracked()
}

private enum MadeResolvedError: Error, Equatable {
  case failed
  case code(Int)
}
