import Covenant
import CovenantTesting
import XCTest

/// Swift concurrency both ways: every derived receiver is an `AsyncSequence`, and an
/// `AsyncSequence` can feed a channel.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
final class StreamBridgeTests: XCTestCase {
  func testEveryDerivedReceiverIsAnAsyncSequence() async {
    for stage in streamStageCases {
      let derived = stage.make(filledChannel([1, 2, 3]).receiver)
      var received: [Int] = []
      for await value in derived { received.append(value) }
      if stage.passesElementsThrough {
        XCTAssertEqual(received, [1, 2, 3], stage.name)
      } else {
        XCTAssertFalse(received.isEmpty, stage.name)
      }
    }
  }

  func testReceiversOwnOperatorsChainInsideAForAwaitLoop() async {
    let source = filledChannel(Array(1...10))
    var received: [Int] = []
    for await value in source.receiver.filter({ $0.isMultiple(of: 2) }).prefix(3) {
      received.append(value)
    }
    XCTAssertEqual(received, [2, 4, 6])
  }

  func testATimeOperatorUsedFromATaskRunsOnRealTime() async {
    let source = filledChannel([1, 2, 3], closed: false)
    let debounced = source.receiver.debounce(for: .milliseconds(20))
    var iterator = debounced.makeAsyncIterator()
    let first = await iterator.next()
    XCTAssertEqual(first, 3)
    source.close()
    let end = await iterator.next()
    XCTAssertNil(end)
  }

  func testAnAsyncSequenceFeedsAChannelAndClosesItAtTheEnd() {
    let stream = AsyncStream<Int> { continuation in
      for value in 1...5 { continuation.yield(value) }
      continuation.finish()
    }
    let channel = CoChannel(consuming: stream)
    let drained = drainOnAQueue(channel.receiver.map { $0 * 10 })
    XCTAssertEqual(drained.elements, [10, 20, 30, 40, 50])
    XCTAssertTrue(drained.endedClosed)
  }

  func testTheChannelsBackPressureReachesTheSequence() {
    let produced = Locked(0)
    let stream = AsyncStream<Int>(unfolding: {
      produced.withLock {
        $0 += 1
        return $0
      }
    })
    let channel = CoChannel(consuming: stream, bufferType: .buffered(capacity: 2))
    let firstThree = drainOnAQueue(channel.receiver.prefix(3))
    XCTAssertEqual(firstThree.elements, [1, 2, 3])
    Thread.sleep(forTimeInterval: 0.05)
    XCTAssertLessThanOrEqual(produced.withLock { $0 }, 8, "the sequence was not run far ahead")
    XCTAssertTrue(channel.isCanceled, "prefix cancelled what it read, and so the task")
  }

  func testASequenceThatThrowsCancelsTheChannel() {
    struct Broken: Error {}
    let stream = AsyncThrowingStream<Int, any Error> { continuation in
      continuation.yield(1)
      continuation.finish(throwing: Broken())
    }
    let channel = CoChannel(consuming: stream, bufferType: .unlimited)
    let drained = drainOnAQueue(channel.receiver)
    XCTAssertEqual(drained.end as? CoChannelError, .canceled)
  }

  /// `drain` with real threads: the channel is fed by a task.
  private func drainOnAQueue<T: Sendable>(_ receiver: CoChannel<T>.Receiver) -> Drained<T> {
    let outcome = DispatchQueue.global().coroutineFuture { () -> Drained<T> in
      var elements: [T] = []
      do {
        while true { elements.append(try receiver.awaitReceive()) }
      } catch {
        return Drained(elements: elements, end: error)
      }
    }
    return (try? wait(for: outcome, timeout: 10)) ?? Drained(elements: [], end: nil)
  }
}
