import Covenant
import CovenantTesting
import Dispatch
import Foundation
import XCTest

/// An error with an identity, for checking which error came through.
struct TestError: Error, Equatable, CustomStringConvertible {
  let id: Int
  init(_ id: Int = 0) { self.id = id }
  var description: String { "TestError(\(id))" }
}

/// A serial queue that can tell whether the current code runs on it.
final class LabeledQueue: @unchecked Sendable {  // immutable after init; Dispatch is thread-safe
  let queue: DispatchQueue
  private let key = DispatchSpecificKey<ObjectIdentifier>()

  init(_ label: String = "covenant.test", concurrent: Bool = false) {
    queue = DispatchQueue(label: label, attributes: concurrent ? .concurrent : [])
    queue.setSpecific(key: key, value: ObjectIdentifier(self))
  }

  /// Whether the caller runs on this queue.
  var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self) }
}

/// A thread-safe log of what the blocks under test saw.
final class Recorder<Element: Sendable>: Sendable {
  private let storage = Locked<[Element]>([])  // TSan sees its hand-overs
  func append(_ element: Element) { storage.withLock { $0.append(element) } }
  var elements: [Element] { storage.withLock { $0 } }
  var count: Int { storage.withLock { $0.count } }
  func removeAll() { storage.withLock { $0.removeAll() } }
}

/// Base class of the promise tests: every test must leave no promise pending behind it.
class PromiseTestCase: XCTestCase {
  let queue = LabeledQueue()

  override func tearDown() {
    assertNoPendingPromises(timeout: 2)
    super.tearDown()
  }

  /// Waits for every promise block (running the main run loop meanwhile).
  func settle(file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertTrue(waitForPromises(timeout: 2), "promises still pending", file: file, line: line)
  }

  /// Runs the main run loop until `condition` holds; `false` after `timeout` seconds.
  func eventually(timeout: TimeInterval = 2, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() {
      if Date() >= deadline { return false }
      _ = waitForPromises(timeout: 0.001)
    }
    return true
  }

  /// Lets queued blocks run for a moment, without requiring every promise to be resolved.
  func runBriefly() { _ = waitForPromises(timeout: 0.02) }

  /// Checks §2.2's memory rule for an operator: `derive(source)` is kept alive by the pending
  /// `source` alone, and released once `source` is resolved and everything has run.
  func checkDerivedLifetime<Derived>(
    resolving resolve: (Promise<Int>) -> Void,
    _ derive: (Promise<Int>) -> Promise<Derived>,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let source = Promise<Int>()
    weak var weakDerived: Promise<Derived>?
    do {
      let derived = derive(source)
      weakDerived = derived
    }
    XCTAssertNotNil(weakDerived, "released while its source is pending", file: file, line: line)
    XCTAssertTrue(weakDerived?.isPending ?? false, file: file, line: line)
    resolve(source)
    settle(file: file, line: line)
    XCTAssertNil(weakDerived, "still alive after everything ran", file: file, line: line)
  }
}
