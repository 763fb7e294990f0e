import CovenantCore
import Dispatch
import XCTest

/// `InlineMutex`: exclusion under contention, the value's place after the lock for every
/// alignment, ownership of the value, and that it stays inside its object.
final class InlineMutexTests: XCTestCase {
  func testMutualExclusionUnderContention() {
    let pair = InlineMutex(Pair())
    let threads = 8
    let rounds = TestScale.stress(20_000)
    let torn = InlineAtomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      for _ in 0..<rounds {
        pair.withLock { pair in
          if pair.first != pair.second { torn.wrappingAdd(1, ordering: .relaxed) }
          pair.first += 1
          pair.second += 1
        }
      }
    }
    XCTAssertEqual(torn.load(ordering: .relaxed), 0, "no section saw another's half-done update")
    XCTAssertEqual(pair.withLock { $0.first }, threads * rounds)
    XCTAssertEqual(pair.withLock { $0.second }, threads * rounds)
  }

  func testResultsAndErrorsPassThrough() {
    let names = InlineMutex<[String]>(["a"])
    XCTAssertEqual(
      names.withLock {
        $0.append("b")
        return $0.count
      }, 2)
    XCTAssertThrowsError(
      try names.withLock { (_: inout [String]) throws(Failure) in throw Failure() }
    ) { XCTAssertTrue($0 is Failure) }
    XCTAssertEqual(names.withLock { $0 }, ["a", "b"], "still usable after a throw")
  }

  /// `withLock` finds the value at `valueOffset`; Swift's own layout must agree, or the value
  /// would overlap the lock or run past the struct.
  func testValueOffsetMatchesSwiftsLayout() {
    checkLayout(UInt8.self)
    checkLayout(UInt16.self)
    checkLayout(UInt32.self)
    checkLayout(UInt64.self)
    checkLayout(SIMD4<Float>.self)  // 16-byte alignment
    checkLayout([Int].self)
    checkLayout((UInt8, UInt64, UInt8).self)
  }

  private func checkLayout<T>(_: T.Type) {
    let offset = InlineMutex<T>.valueOffset
    XCTAssertEqual(offset % MemoryLayout<T>.alignment, 0, "\(T.self)")
    XCTAssertGreaterThanOrEqual(offset, MemoryLayout<LockStorage>.size, "\(T.self)")
    XCTAssertEqual(MemoryLayout<InlineMutex<T>>.size, offset + MemoryLayout<T>.size, "\(T.self)")
  }

  /// Swift destroys the value at its own idea of the field's offset, `withLock` replaces it at
  /// `valueOffset`: each object is released exactly once only if the two agree.
  func testValueWrittenUnderTheLockIsTheOneSwiftDestroys() {
    let released = ReleaseLog()
    do {
      let holder = MutexHolder(Tracked("first", released))
      holder.box.withLock { $0 = Tracked("second", released) }
      XCTAssertEqual(released.names, ["first"], "the replaced value was released")
      XCTAssertEqual(holder.box.withLock { $0.name }, "second")
    }
    XCTAssertEqual(
      released.names, ["first", "second"],
      "the value written under the lock was released with the mutex, once")
  }

  /// The mutex (lock first) is the object's only stored property: borrowing it yields exactly
  /// the object's storage, on every call.
  func testMutexIsBorrowedInPlace() {
    let holder = MutexHolder(Tracked("only", ReleaseLog()))
    let storedProperties = UInt(bitPattern: _getUnsafePointerToStoredProperties(holder))
    for _ in 0..<2 {
      XCTAssertEqual(withUnsafePointer(to: holder.box) { UInt(bitPattern: $0) }, storedProperties)
    }
  }
}

private struct Pair {
  var first = 0
  var second = 0
}

private struct Failure: Error {}

/// Appends its name to `released` when deallocated.
private final class Tracked: Sendable {
  let name: String
  let released: ReleaseLog
  init(_ name: String, _ released: ReleaseLog) {
    self.name = name
    self.released = released
  }
  deinit { released.append(name) }
}

private final class ReleaseLog: Sendable {
  private let storage = InlineMutex<[String]>([])
  func append(_ name: String) { storage.withLock { $0.append(name) } }
  var names: [String] { storage.withLock { $0 } }
}

private final class MutexHolder: Sendable {
  let box: InlineMutex<Tracked>
  init(_ value: Tracked) { box = InlineMutex(value) }
}
