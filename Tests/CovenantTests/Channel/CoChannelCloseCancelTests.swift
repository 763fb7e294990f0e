import Covenant
import Dispatch
import Foundation
import XCTest

/// `close()` versus `cancel()`, and the callbacks that report them.
final class CoChannelCloseCancelTests: XCTestCase {
  func testCloseReturnsWhetherThisCallClosed() {
    let channel = CoChannel<Int>()
    XCTAssertFalse(channel.isClosed)
    XCTAssertTrue(channel.close())
    XCTAssertTrue(channel.isClosed)
    XCTAssertFalse(channel.close())
    let canceled = CoChannel<Int>()
    canceled.cancel()
    XCTAssertFalse(canceled.close())
    XCTAssertTrue(canceled.isClosed)
  }

  func testReceiversDrainAfterCloseThenGetClosed() {
    let channel = CoChannel<Int>(capacity: 3)
    channel.offer(1)
    channel.offer(2)
    channel.close()
    XCTAssertEqual(channel.count, 2)
    coRun {
      XCTAssertEqual(try channel.awaitReceive(), 1)
      XCTAssertEqual(try channel.awaitReceive(), 2)
      XCTAssertThrowsError(try channel.awaitReceive()) {
        XCTAssertTrue(isChannelError($0, .closed))
      }
      XCTAssertThrowsError(try channel.awaitReceive()) {
        XCTAssertTrue(isChannelError($0, .closed))
      }
    }
    XCTAssertNil(channel.poll())
    XCTAssertFalse(channel.isCanceled)
  }

  func testCloseWakesWaitingReceiversWithClosed() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let errors = Recorder<String>()
    for _ in 0..<3 { queue.start(errors: errors) { _ = try channel.awaitReceive() } }
    queue.flush()
    XCTAssertEqual(errors.count, 0)
    channel.close()
    queue.flush()
    XCTAssertEqual(errors.elements, Array(repeating: "\(CoChannelError.closed)", count: 3))
  }

  func testSendersSuspendedBeforeCloseAreStillDelivered() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let sent = Recorder<Int>()
    for value in 0..<2 {
      queue.start {
        try channel.awaitSend(value)
        sent.append(value)
      }
    }
    queue.flush()
    XCTAssertTrue(channel.close())
    let completed = Box(false)
    channel.whenComplete { completed.value = true }
    XCTAssertFalse(completed.value, "not drained yet")
    XCTAssertEqual(channel.poll(), 0)
    XCTAssertEqual(channel.poll(), 1)
    queue.flush()
    XCTAssertEqual(sent.elements, [0, 1])
    XCTAssertTrue(completed.value, "drained")
    XCTAssertNil(channel.poll())
  }

  func testSendAfterCloseThrowsClosed() {
    let channel = CoChannel<Int>()
    channel.close()
    XCTAssertFalse(channel.offer(1))
    XCTAssertThrowsError(try channel.awaitSend(1)) { XCTAssertTrue(isChannelError($0, .closed)) }
    coRun {
      XCTAssertThrowsError(try channel.sender.awaitSend(2)) {
        XCTAssertTrue(isChannelError($0, .closed))
      }
    }
    XCTAssertEqual(channel.count, 0)
  }

  func testCancelWakesEveryWaiterWithCanceledAndDropsTheBuffer() {
    let receiving = CoChannel<Int>(bufferType: .none)
    let sending = CoChannel<Int>(capacity: 1)
    sending.offer(0)
    let queue = CoQueue()
    let errors = Recorder<String>()
    for _ in 0..<3 { queue.start(errors: errors) { _ = try receiving.awaitReceive() } }
    for value in 1...3 { queue.start(errors: errors) { try sending.awaitSend(value) } }
    queue.flush()
    XCTAssertEqual(errors.count, 0)
    XCTAssertEqual(sending.count, 4)

    receiving.cancel()
    sending.cancel()
    queue.flush()
    XCTAssertEqual(errors.elements, Array(repeating: "\(CoChannelError.canceled)", count: 6))
    XCTAssertEqual(sending.count, 0)
    XCTAssertTrue(sending.isEmpty)
    XCTAssertNil(sending.poll())
  }

  func testEveryOperationOnACancelledChannelFailsWithCanceled() {
    let channel = CoChannel<Int>(capacity: 2)
    channel.offer(1)
    channel.cancel()
    XCTAssertTrue(channel.isCanceled)
    XCTAssertFalse(channel.offer(2))
    XCTAssertNil(channel.poll())
    XCTAssertThrowsError(try channel.awaitSend(3)) { XCTAssertTrue(isChannelError($0, .canceled)) }
    XCTAssertThrowsError(try channel.awaitReceive()) {
      XCTAssertTrue(isChannelError($0, .canceled))
    }
    let result = Box<Result<Int, CoChannelError>?>(nil)
    channel.whenReceive { result.value = $0 }
    XCTAssertEqual(result.value, .failure(.canceled))
    XCTAssertThrowsError(try channel.receiveFuture().result?.get()) {
      XCTAssertTrue(isChannelError($0, .canceled))
    }
    channel.cancel()  // idempotent
  }

  func testWhenCompleteRunsOnceOnCancel() {
    let channel = CoChannel<Int>()
    channel.offer(1)
    let completions = Recorder<String>()
    channel.whenComplete { completions.append("complete") }
    channel.whenCanceled { completions.append("canceled") }
    channel.cancel()
    channel.cancel()
    XCTAssertEqual(completions.elements, ["canceled", "complete"])
    channel.whenComplete { completions.append("late complete") }
    channel.whenCanceled { completions.append("late canceled") }
    XCTAssertEqual(
      completions.elements, ["canceled", "complete", "late complete", "late canceled"])
  }

  func testWhenCompleteRunsOnceWhenClosedAndDrained() {
    let channel = CoChannel<Int>()
    let completions = Recorder<String>()
    channel.whenComplete { completions.append("complete") }
    channel.whenCanceled { completions.append("canceled") }
    channel.offer(1)
    channel.close()
    XCTAssertEqual(completions.elements, [], "closed but not drained")
    XCTAssertEqual(channel.poll(), 1)
    XCTAssertEqual(completions.elements, ["complete"])
    channel.whenComplete { completions.append("late") }
    XCTAssertEqual(completions.elements, ["complete", "late"])
    // Cancelling afterwards still cancels, but completion does not run twice.
    channel.cancel()
    XCTAssertEqual(completions.elements, ["complete", "late", "canceled"])
  }

  func testCloseOfEmptyChannelCompletesAtOnce() {
    let channel = CoChannel<Int>(bufferType: .none)
    let completed = Box(0)
    channel.whenComplete { completed.value += 1 }
    channel.close()
    XCTAssertEqual(completed.value, 1)
    channel.close()
    XCTAssertEqual(completed.value, 1)
  }

  func testIterationEndsOnCloseAndOnCancel() {
    let closing = CoChannel<Int>()
    let canceling = CoChannel<Int>()
    for value in 0..<3 {
      closing.offer(value)
      canceling.offer(value)
    }
    closing.close()
    coRun {
      XCTAssertEqual(Array(closing.makeIterator()), [0, 1, 2])
      var seen: [Int] = []
      for value in canceling.makeIterator() {
        seen.append(value)
        if value == 1 { canceling.cancel() }
      }
      XCTAssertEqual(seen, [0, 1])
    }
  }

  func testChannelInScopeIsCancelledWithIt() {
    let scope = CoScope()
    let channel = CoChannel<Int>().added(to: scope)
    let receiver = CoChannel<Int>().receiver.added(to: scope)
    scope.cancel()
    XCTAssertTrue(channel.isCanceled)
    XCTAssertTrue(receiver.isCanceled)
  }
}
