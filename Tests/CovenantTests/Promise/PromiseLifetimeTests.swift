import Covenant
import CovenantTesting
import Dispatch
import XCTest

final class PromiseLifetimeTests: PromiseTestCase {
  func testUnreferencedPendingPromiseIsDeallocatedAndLeavesTheGroup() {
    weak var weakPromise: Promise<Int>?
    do {
      let promise = Promise<Int>()
      weakPromise = promise
      XCTAssertFalse(waitForPromises(timeout: 0.01), "a pending promise is in the group")
    }
    XCTAssertNil(weakPromise)
    XCTAssertTrue(waitForPromises(timeout: 1))
  }

  func testUnreferencedPendingChainIsDeallocated() {
    weak var weakSource: Promise<Int>?
    weak var weakDerived: Promise<Int>?
    do {
      let source = Promise<Int>()
      let derived = source.then(on: queue.queue) { $0 + 1 }.catch(on: queue.queue) { _ in }
      weakSource = source
      weakDerived = derived
    }
    XCTAssertNil(weakSource)
    XCTAssertNil(weakDerived)
    XCTAssertTrue(waitForPromises(timeout: 1))
  }

  func testUnreferencedCombinatorsOverPendingPromisesAreDeallocated() {
    weak var weakAll: Promise<[Int]>?
    weak var weakAny: Promise<[Maybe<Int>]>?
    weak var weakRace: Promise<Int>?
    weak var weakTuple: Promise<(Int, Double)>?
    do {
      let a = Promise<Int>()
      let b = Promise<Int>()
      weakAll = all(on: queue.queue, a, b)
      weakAny = any(on: queue.queue, a, b)
      weakRace = race(on: queue.queue, a, b)
      weakTuple = all(on: queue.queue, a, Promise<Double>())
      a.fulfill(1)  // b stays pending, then nobody references anything
    }
    settle()
    XCTAssertNil(weakAll)
    XCTAssertNil(weakAny)
    XCTAssertNil(weakRace)
    XCTAssertNil(weakTuple)
  }

  func testWorkBlockPromiseKeepsItselfAliveUntilResolved() throws {
    let release = DispatchSemaphore(value: 0)
    weak var weakPromise: Promise<Int>?
    do {
      let promise = Promise<Int>(on: .global()) {
        release.wait()
        return 1
      }
      weakPromise = promise
    }
    XCTAssertNotNil(weakPromise)
    release.signal()
    settle()
    XCTAssertNil(weakPromise)
  }

  func testExpectNoPendingPromises() {
    let pending = Promise<Int>()
    XCTAssertThrowsError(try expectNoPendingPromises(timeout: 0.01)) { error in
      XCTAssertTrue("\(error)".contains("DispatchGroup.promises"), "\(error)")
    }
    pending.fulfill(1)
    XCTAssertNoThrow(try expectNoPendingPromises(timeout: 1))
    assertNoPendingPromises()
  }
}
