import Covenant
import Dispatch
import XCTest

/// The many-producers/many-consumers channel run of issue 11, at full size in EVERY build,
/// sanitizers included: it is the test that showed the lock hand-over ThreadSanitizer could not
/// see (a suppressed race still costs a report on every contended hand-over, which stalled it
/// for minutes). Never scale it down: a sanitizer run must exercise the contended lock.
final class ChannelMPMCFullSizeTests: XCTestCase {
  func testFourProducersFourConsumersCapacity16FullSize() {
    let producers = 4
    let consumers = 4
    let perProducer = 25_000
    let channel = CoChannel<Int>(capacity: 16)
    let queue = DispatchQueue(label: "mpmc-full", attributes: .concurrent)
    let received = Locked([UInt8](repeating: 0, count: producers * perProducer))
    let order = Locked(true)  // each producer's elements arrive in order at any one consumer
    let producersLeft = Locked(producers)
    let consumersDone = DispatchSemaphore(value: 0)
    let started = DispatchTime.now()
    for _ in 0..<consumers {
      queue.startCoroutine {
        var local: [Int] = []
        var lastFromProducer = [Int](repeating: -1, count: producers)
        var inOrder = true
        do {
          while true {
            let value = try channel.awaitReceive()
            local.append(value)
            let producer = value / perProducer
            if value <= lastFromProducer[producer] { inOrder = false }
            lastFromProducer[producer] = value
          }
        } catch {
          XCTAssertEqual(error as? CoChannelError, .closed, "a consumer ended with \(error)")
        }
        received.withLock { counts in for value in local { counts[value] &+= 1 } }
        if !inOrder { order.withLock { $0 = false } }
        consumersDone.signal()
      }
    }
    for producer in 0..<producers {
      queue.startCoroutine {
        for offset in 0..<perProducer { try channel.awaitSend(producer * perProducer + offset) }
        if producersLeft.withLock({ left -> Bool in
          left -= 1
          return left == 0
        }) {
          channel.close()
        }
      }
    }
    for _ in 0..<consumers {
      // A generous bound so that a regression fails instead of hanging; no timing is asserted.
      XCTAssertEqual(
        consumersDone.wait(timeout: .now() + 600), .success, "a consumer never finished")
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    print("MPMC 4x4, capacity 16, 100,000 elements: \(String(format: "%.2f", seconds)) s")
    let counts = received.withLock { $0 }
    XCTAssertEqual(counts.count(where: { $0 == 0 }), 0, "elements lost")
    XCTAssertEqual(counts.count(where: { $0 > 1 }), 0, "elements received twice")
    XCTAssertTrue(order.withLock { $0 }, "a producer's elements arrived out of order")
    XCTAssertTrue(channel.isEmpty)
  }
}
