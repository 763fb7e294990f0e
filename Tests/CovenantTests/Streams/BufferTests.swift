import Covenant
import CovenantTesting
import XCTest

/// `buffer(capacity:policy:)` and `conflated()`: a stage that keeps taking elements while its
/// consumers are busy.
final class BufferTests: XCTestCase {
  /// Lets a buffer fill from `source` (a rendezvous channel fed by a producer on `scheduler`
  /// with 1…`count`) while nobody receives, then receives everything.
  private func fillThenDrain(
    count: Int, _ stage: (CoChannel<Int>.Receiver) -> CoChannel<Int>.Receiver
  ) -> (taken: Int, drained: Drained<Int>) {
    let scheduler = TestScheduler()
    let source = CoChannel<Int>(bufferType: .none)
    let sent = Recorder<Int>()
    scheduler.startCoroutine {
      for value in 1...count {
        try source.awaitSend(value)
        sent.append(value)
      }
      source.close()
    }
    let buffered = stage(source.receiver)
    startStage(buffered, on: scheduler)
    scheduler.run()
    let taken = sent.count
    return (taken, drain(buffered, on: scheduler))
  }

  func testSuspendTakesUpToItsCapacityAheadThenHoldsTheProducerBack() {
    let (taken, drained) = fillThenDrain(count: 10) { $0.buffer(capacity: 3, policy: .suspend) }
    XCTAssertEqual(taken, 4, "three buffered, one in hand")
    XCTAssertEqual(drained.elements, Array(1...10))
    XCTAssertTrue(drained.endedClosed)
  }

  func testDropOldestKeepsTheLatestElements() {
    let (taken, drained) = fillThenDrain(count: 10) { $0.buffer(capacity: 3, policy: .dropOldest) }
    XCTAssertEqual(taken, 10, "a dropping buffer never holds the producer back")
    XCTAssertEqual(drained.elements, [8, 9, 10])
  }

  func testDropNewestKeepsTheEarliestElements() {
    let (_, drained) = fillThenDrain(count: 10) { $0.buffer(capacity: 3, policy: .dropNewest) }
    XCTAssertEqual(drained.elements, [1, 2, 3])
  }

  func testConflatedKeepsOnlyTheLatest() {
    let (_, drained) = fillThenDrain(count: 10) { $0.conflated() }
    XCTAssertEqual(drained.elements, [10])
    let source = CoChannel<Int>()
    XCTAssertEqual(source.receiver.conflated().bufferType, .conflated)
  }

  func testCapacityZeroHandsEachElementOverDirectly() {
    let (taken, drained) = fillThenDrain(count: 5) { $0.buffer(capacity: 0) }
    XCTAssertEqual(taken, 1, "one in hand")
    XCTAssertEqual(drained.elements, Array(1...5))
  }

  func testAnUpstreamCancelDropsTheBuffer() {
    let scheduler = TestScheduler()
    let source = filledChannel([1, 2, 3], closed: false)
    let buffered = source.receiver.buffer(capacity: 10)
    startStage(buffered, on: scheduler)
    scheduler.run()
    XCTAssertEqual(buffered.count, 3)
    source.cancel()
    scheduler.run()
    let drained = drain(buffered, on: scheduler)
    XCTAssertEqual(drained.elements, [])
    XCTAssertEqual(drained.end as? CoChannelError, .canceled)
  }

  func testReleasingTheBufferedReceiverStopsTheStageButLeavesItsUpstream() {
    let scheduler = TestScheduler()
    let source = CoChannel<Int>()
    let buffered = Locked<CoChannel<Int>.Receiver?>(source.receiver.buffer(capacity: 2))
    let started = scheduler.coroutineFuture { buffered.withLock { $0 }?.poll() }
    scheduler.run()
    XCTAssertNotNil(started.result)
    buffered.withLock { $0 = nil }
    scheduler.run()
    XCTAssertFalse(source.isCanceled)
    XCTAssertTrue(source.offer(1))
    XCTAssertEqual(source.poll(), 1, "nobody reads it any more")
  }
}
