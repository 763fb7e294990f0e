import Covenant
import Dispatch
import Foundation
import XCTest

/// FIFO order among waiting senders and among waiting receivers.
final class CoChannelFairnessTests: XCTestCase {
  func testWaitingSendersAreServedInOrder() {
    for bufferType in [
      CoChannel<Int>.BufferType.none, .buffered(capacity: 1), .buffered(capacity: 3),
    ] {
      let channel = CoChannel<Int>(bufferType: bufferType)
      let queue = CoQueue()
      let resumed = Recorder<Int>()
      for value in 0..<10 {
        queue.start {
          try channel.awaitSend(value)
          resumed.append(value)
        }
        queue.flush()  // each sender is queued before the next starts
      }
      var received: [Int] = []
      while let value = channel.poll() {
        received.append(value)
        queue.flush()
      }
      XCTAssertEqual(received, Array(0..<10), "\(bufferType)")
      XCTAssertEqual(resumed.elements, Array(0..<10), "\(bufferType)")
    }
  }

  func testWaitingReceiversAreServedInOrder() {
    for bufferType in [
      CoChannel<Int>.BufferType.none, .buffered(capacity: 2), .unlimited, .conflated,
    ] {
      let channel = CoChannel<Int>(bufferType: bufferType)
      let queue = CoQueue()
      let received = Recorder<String>()
      for index in 0..<8 {
        queue.start { received.append("r\(index)=\(try channel.awaitReceive())") }
        queue.flush()
      }
      for value in 0..<8 {
        XCTAssertTrue(channel.offer(value * 10))
        queue.flush()
      }
      XCTAssertEqual(received.elements, (0..<8).map { "r\($0)=\($0 * 10)" }, "\(bufferType)")
    }
  }

  func testCallbacksFuturesAndCoroutinesShareOneReceiverLine() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let log = Recorder<String>()
    channel.whenReceive { log.append("callback \((try? $0.get()) ?? -1)") }
    let future = channel.receiveFuture()
    future.whenSuccess { log.append("future \($0)") }
    queue.start { log.append("coroutine \(try channel.awaitReceive())") }
    queue.flush()
    for value in 1...3 {
      XCTAssertTrue(channel.offer(value))
      queue.flush()
    }
    XCTAssertEqual(log.elements, ["callback 1", "future 2", "coroutine 3"])
  }

  func testCancelledWaitersLoseTheirTurnWithoutConsuming() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let scope = CoScope()
    let log = Recorder<String>()
    queue.queue.startCoroutine(in: scope) {
      do { log.append("first \(try channel.awaitReceive())") } catch {
        log.append("first \(error)")
      }
    }
    queue.start { log.append("second \(try channel.awaitReceive())") }
    queue.flush()
    scope.cancel()
    queue.flush()
    XCTAssertTrue(channel.offer(7))
    queue.flush()
    XCTAssertEqual(log.elements, ["first \(CoroutineError.canceled)", "second 7"])
    XCTAssertFalse(channel.offer(8), "no receiver left behind")
  }
}
