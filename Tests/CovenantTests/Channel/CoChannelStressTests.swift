import Covenant
import Dispatch
import Foundation
import XCTest

/// Many producers and consumers on concurrent queues: every element received exactly once.
final class CoChannelStressTests: XCTestCase {
  private func runMPMC(
    bufferType: CoChannel<Int>.BufferType, producers: Int, consumers: Int, perProducer: Int
  ) {
    let channel = CoChannel<Int>(bufferType: bufferType)
    let queue = DispatchQueue(label: "mpmc", attributes: .concurrent)
    let seen = Locked([UInt8](repeating: 0, count: producers * perProducer))
    let unfinishedProducers = Locked(producers)
    let finished = DispatchSemaphore(value: 0)
    for consumer in 0..<consumers {
      queue.startCoroutine {
        var local: [Int] = []
        local.reserveCapacity(producers * perProducer / consumers + 16)
        for value in channel.makeIterator() { local.append(value) }
        seen.withLock { seen in for value in local { seen[value] &+= 1 } }
        _ = consumer
        finished.signal()
      }
    }
    for producer in 0..<producers {
      queue.startCoroutine {
        let base = producer * perProducer
        for offset in 0..<perProducer { try channel.awaitSend(base + offset) }
        let last = unfinishedProducers.withLock { count -> Bool in
          count -= 1
          return count == 0
        }
        if last { channel.close() }
      }
    }
    for _ in 0..<consumers {
      XCTAssertEqual(finished.wait(timeout: .now() + 120), .success, "\(bufferType)")
    }
    let counts = seen.withLock { $0 }
    XCTAssertEqual(counts.filter { $0 != 1 }.count, 0, "\(bufferType): every element exactly once")
    XCTAssertTrue(channel.isEmpty)
  }

  func testMPMCBuffered100k() {
    runMPMC(
      bufferType: .buffered(capacity: 16), producers: 4, consumers: 4,
      perProducer: TestScale.stress(25_000))
  }

  func testMPMCRendezvous() {
    runMPMC(bufferType: .none, producers: 3, consumers: 3, perProducer: TestScale.stress(10_000))
  }

  func testMPMCUnlimited() {
    runMPMC(
      bufferType: .unlimited, producers: 3, consumers: 2, perProducer: TestScale.stress(10_000))
  }

  func testConcurrentCancelLosesNoWaiter() {
    // Senders, receivers and a cancel race; every coroutine must end.
    for _ in 0..<TestScale.stress(20, sanitizerDivisor: 5) {
      let channel = CoChannel<Int>(bufferType: .buffered(capacity: 2))
      let queue = DispatchQueue(label: "cancel-race", attributes: .concurrent)
      let group = DispatchGroup()
      for index in 0..<8 {
        group.enter()
        queue.startCoroutine {
          defer { group.leave() }
          if index % 2 == 0 {
            while (try? channel.awaitSend(index)) != nil {}
          } else {
            while (try? channel.awaitReceive()) != nil {}
          }
        }
      }
      // From a thread of its own: the coroutines may keep every worker of the (2-core) pool
      // busy without ever suspending, and a cancel queued behind them would starve.
      Thread.detachNewThread {
        Thread.sleep(forTimeInterval: 0.005)
        channel.cancel()
      }
      XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
    }
  }
}
