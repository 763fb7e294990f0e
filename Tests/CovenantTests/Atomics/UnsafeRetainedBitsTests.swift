import CovenantCore
import Dispatch
import Foundation  // ProcessInfo
import XCTest

/// `UnsafeRetainedBits`, the one form of a retained reference kept as bits
/// (Architecture.md, "Ownership kept in words"): what each operation does to the object's
/// retain, that debug builds stop a second take, and that every retain the core keeps as bits
/// is given back once a workload is over (`RetainedBitsLedger`).
final class UnsafeRetainedBitsTests: XCTestCase {
  private final class Object {}

  private static let childVariable = "COVENANT_RETAINED_BITS_CHILD"

  func testTakeGivesTheRetainBack() {
    weak var weakObject: Object?
    var bits = UnsafeRetainedBits<Object>.none
    do {
      let object = Object()
      weakObject = object
      bits = UnsafeRetainedBits(retaining: object)
    }
    XCTAssertNotNil(weakObject, "the bits keep the object")
    XCTAssertTrue(bits.borrow { $0 === weakObject })
    do {
      let taken = bits.take()
      XCTAssertTrue(taken === weakObject)
    }
    XCTAssertNil(weakObject, "the taken retain was the last one")
  }

  func testReleaseGivesTheRetainBack() {
    weak var weakObject: Object?
    var bits = UnsafeRetainedBits<Object>.none
    do {
      let object = Object()
      weakObject = object
      bits = UnsafeRetainedBits(retaining: Unmanaged.passUnretained(object))
    }
    XCTAssertNotNil(weakObject)
    bits.release()
    XCTAssertNil(weakObject)
  }

  func testTagsTravelWithTheBitsAndLeaveTheObjectAlone() {
    let object = Object()
    let bits = UnsafeRetainedBits(retaining: object)
    let tagged = bits.tagged(1).tagged(4)
    XCTAssertEqual(tagged.tags, 5)
    XCTAssertEqual(tagged.untagged, bits)
    XCTAssertTrue(tagged.refersToSameObject(as: bits))
    XCTAssertFalse(tagged.isNone)
    XCTAssertTrue(tagged.borrow { $0 === object })
    XCTAssertTrue(UnsafeRetainedBits<Object>.none.tagged(2).isNone, "a tag is no object")
    XCTAssertEqual(
      UnsafeRetainedBits<Object>.poisoned.tags, 0, "the poison value is no tagged object")
    tagged.untagged.release()
  }

  func testAnObjectsLowBitsAreFreeForTags() {
    for _ in 0..<100 {
      let bits = UnsafeRetainedBits(retaining: Object())
      XCTAssertEqual(bits.tags, 0, "objects are at least 8-aligned")
      bits.release()
    }
  }

  /// A second take of the same bits would free the object under its other owners; debug builds
  /// stop at the take instead (the poison a holder leaves, or bits without an object).
  func testTakingPoisonedBitsStopsADebugBuild() throws {
    try XCTSkipUnless(RetainedBitsLedger.isCounting, "the check is a debug assertion")
    try ChildProcess.expectCrash(
      test: "UnsafeRetainedBitsTests/testChildMisuse", variable: Self.childVariable,
      value: "poisoned", message: "taken twice")
  }

  func testTakingNoObjectStopsADebugBuild() throws {
    try XCTSkipUnless(RetainedBitsLedger.isCounting, "the check is a debug assertion")
    try ChildProcess.expectCrash(
      test: "UnsafeRetainedBitsTests/testChildMisuse", variable: Self.childVariable,
      value: "none", message: "never stored, or taken already")
  }

  func testChildMisuse() throws {
    switch ProcessInfo.processInfo.environment[Self.childVariable] {
    case "poisoned": _ = UnsafeRetainedBits<Object>.poisoned.take()
    case "none": UnsafeRetainedBits<Object>.none.release()
    default: return  // only meaningful in the child process spawned above
    }
    XCTFail("the child should have crashed")
  }

  /// Every retain the promise core, the coroutines and the channels keep as bits — chain links,
  /// queued chains, a chained step's source, a coroutine's queue and finish callbacks, timer
  /// heap slots, select slots, spare waiters — is given back once the work is over: the ledger
  /// returns to where it was. A leak of one retain per round, or a second give-back, moves it
  /// by at least `rounds`; work of earlier tests that ends meanwhile moves it by far less.
  func testEveryRetainKeptAsBitsIsGivenBack() throws {
    try XCTSkipUnless(RetainedBitsLedger.isCounting, "the ledger counts in debug builds")
    let rounds = 200
    let before = RetainedBitsLedger.outstanding
    for _ in 0..<rounds { try oneRoundOfWork() }
    // Each round ends with its queue drained: whatever its work released, it has released.
    let drift = RetainedBitsLedger.outstanding - before
    XCTAssertLessThan(abs(drift), rounds / 2, "retains kept as bits and not given back: \(drift)")
  }

  /// Chains resolved and abandoned (of promises and futures, told at once or queued in a
  /// drain), awaits cancelled in the middle of a chain (given up, then
  /// compacted), a timed await, join callbacks taken back, a select that waits, a channel's
  /// spare waiter.
  private func oneRoundOfWork() throws {
    let queue = DispatchQueue(label: "retained-bits")
    let source = Promise<Int>.pending()
    let chained = source.then(on: queue) { $0 + 1 }.then(on: queue) { $0 * 2 }
    _ = Promise<Int>.pending().then(on: queue) { $0 }  // dropped pending: its chain is released
    let waiters = CoScope()
    for _ in 0..<4 {
      queue.startCoroutine(in: waiters) { _ = try source.await() }
    }
    queue.startCoroutine(in: waiters) {
      _ = try? source.await(timeout: .milliseconds(1))
    }
    let future = queue.coroutineFuture { try Coroutine.delay(.seconds(60)) }
    let joiner = queue.coroutineFuture { try future.join() }
    let channel = CoChannel<Int>(capacity: 1)
    let other = CoChannel<Int>()
    let selected = queue.coroutineFuture { () -> Int in
      try CoChannel.select { select in
        select.onReceive(channel) { $0 }
        select.onReceive(other) { $0 }
      }
    }
    // Observers resolving futures inline: chains queued in the resolution drain.
    let head = CoPromise<Int>()
    let mapped = head.map { $0 + 1 }.map { $0 * 2 }
    let observed = DispatchSemaphore(value: 0)
    mapped.whenComplete { _ in observed.signal() }
    _ = CoPromise<Int>().map { $0 }  // dropped pending: its observers are told it was cancelled
    head.success(1)
    XCTAssertEqual(observed.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(try mapped.result?.get(), 4)
    queue.sync {}
    waiters.cancel()
    joiner.cancel()
    future.cancel()
    source.fulfill(1)
    try channel.awaitSendOrOffer(2)
    XCTAssertEqual(try awaitPromise(chained), 4)
    XCTAssertEqual(try selected.awaitOutsideCoroutine(), 2)
    try waiters.join()
    _ = try? joiner.join()
    _ = try? future.join()
    queue.sync {}
  }
}

extension CoChannel {
  /// Sends outside a coroutine: the channel has room.
  fileprivate func awaitSendOrOffer(_ element: Element) throws {
    XCTAssertTrue(offer(element), "the channel has room")
  }
}

extension CoFuture {
  /// The value of a future, waited for from a thread that is no coroutine.
  fileprivate func awaitOutsideCoroutine() throws -> Value {
    let done = DispatchSemaphore(value: 0)
    whenComplete { _ in done.signal() }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the future completes")
    return try result!.get()
  }
}
