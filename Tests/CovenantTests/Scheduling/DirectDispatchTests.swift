import CCovenantShims
import CovenantCore
import Dispatch
import Foundation
import XCTest

/// `DirectDispatch` (Architecture.md, "The promise core: cells and reactions"): promise blocks
/// and coroutine slices are handed to libdispatch with `dispatch_async_f`, the queue's
/// `dispatch_queue_t` read from the `DispatchQueue` object. `.ci/run` runs the suite a second
/// time with `COVENANT_DIRECT_DISPATCH=0`, which forces the fallback through
/// `DispatchQueue.async`.
final class DirectDispatchTests: XCTestCase {
  private var isForcedOff: Bool {
    ProcessInfo.processInfo.environment["COVENANT_DIRECT_DISPATCH"] == "0"
  }

  func testDirectPathIsActiveUnlessTurnedOff() {
    XCTAssertEqual(DirectDispatch.isAvailable, !isForcedOff)
    print("direct dispatch: \(DirectDispatch.isAvailable ? "active" : "fallback")")
  }

  /// The word read from each kind of queue is, by address, the queue libdispatch reports as
  /// current while running on it.
  func testRawQueueIsTheQueueLibdispatchRunsOn() throws {
    try XCTSkipUnless(DirectDispatch.isAvailable, "the fallback path reads no raw queue")
    let queues = [
      DispatchQueue(label: "serial"),
      DispatchQueue(label: "concurrent", attributes: .concurrent),
      DispatchQueue(label: "targeted", target: .global()),
      DispatchQueue.global(),
      DispatchQueue.global(qos: .utility),
    ]
    for queue in queues {
      var current: UnsafeMutableRawPointer?
      queue.sync { current = cov_dispatch_current_queue() }
      XCTAssertEqual(current, DirectDispatch.rawQueue(queue), queue.label)
    }
  }

  /// Whichever path is active, reactions and coroutine slices run on their queues.
  func testBlocksAndCoroutinesRunOnTheirQueues() {
    let key = DispatchSpecificKey<Int>()
    let queue = DispatchQueue(label: "direct-or-not")
    queue.setSpecific(key: key, value: 7)
    let done = DispatchSemaphore(value: 0)
    let seen = Box<[Int?]>([])
    Promise(1).then(on: queue) { _ in seen.value.append(DispatchQueue.getSpecific(key: key)) }
      .then(on: queue) { _ in done.signal() }
    queue.startCoroutine {
      try Promise<Void>(on: .global()) {}.await()
      seen.value.append(DispatchQueue.getSpecific(key: key))
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(seen.value, [7, 7])
  }
}
