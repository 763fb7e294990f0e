import Covenant
import CovenantTesting
import XCTest

/// `BroadcastChannel`: every subscriber gets every element sent after it subscribed, in one
/// order, each with a buffer of its own.
final class BroadcastChannelTests: XCTestCase {
  func testEverySubscriberReceivesEveryElementSentAfterItSubscribed() throws {
    let broadcast = BroadcastChannel<Int>()
    let early = broadcast.subscribe()
    try broadcast.send(1)
    let late = broadcast.subscribe()
    try broadcast.send(2)
    try broadcast.send(3)
    broadcast.close()
    XCTAssertEqual(drain(early).elements, [1, 2, 3])
    XCTAssertEqual(drain(late).elements, [2, 3])
  }

  func testANewSubscriberFirstReceivesTheReplayedElements() throws {
    let broadcast = BroadcastChannel<Int>(replay: 2)
    for value in 1...5 { try broadcast.send(value) }
    let subscriber = broadcast.subscribe()
    try broadcast.send(6)
    broadcast.close()
    XCTAssertEqual(drain(subscriber).elements, [4, 5, 6])
    let afterClose = drain(broadcast.subscribe())
    XCTAssertEqual(afterClose.elements, [5, 6], "replay, then the end")
    XCTAssertTrue(afterClose.endedClosed)
  }

  func testEachSubscriberHasItsOwnBufferPolicy() throws {
    let broadcast = BroadcastChannel<Int>(capacity: 2, policy: .dropOldest)
    let latest = broadcast.subscribe()
    let earliest = broadcast.subscribe(capacity: 2, policy: .dropNewest)
    for value in 1...5 { try broadcast.send(value) }  // nobody receives meanwhile
    broadcast.close()
    XCTAssertEqual(drain(latest).elements, [4, 5])
    XCTAssertEqual(drain(earliest).elements, [1, 2])
  }

  func testAFullSuspendingSubscriberHoldsTheSenderBack() {
    let scheduler = TestScheduler()
    let broadcast = BroadcastChannel<Int>(capacity: 2)
    let slow = broadcast.subscribe()
    let fast = broadcast.subscribe(capacity: 1, policy: .dropOldest)
    let sent = Recorder<Int>()
    scheduler.startCoroutine {
      for value in 1...5 {
        try broadcast.send(value)
        sent.append(value)
      }
    }
    scheduler.run()
    XCTAssertEqual(sent.elements, [1, 2], "the third waits for room in the slow subscriber")
    XCTAssertEqual(slow.poll(), 1)
    scheduler.run()
    XCTAssertEqual(sent.elements, [1, 2, 3])
    XCTAssertEqual(fast.poll(), 3, "the dropping subscriber never held anything back")
    let rest = record(slow, on: scheduler)
    scheduler.run()
    XCTAssertEqual(sent.elements, [1, 2, 3, 4, 5])
    broadcast.close()
    scheduler.run()
    XCTAssertEqual(rest.values, [2, 3, 4, 5])
    XCTAssertEqual(rest.end?.error, "closed")
  }

  func testSendingOutsideACoroutineNeverWaitsAndDeliversNothingWhenItWould() throws {
    let broadcast = BroadcastChannel<Int>(capacity: 1)
    let full = broadcast.subscribe()
    let other = broadcast.subscribe(capacity: 5, policy: .dropNewest)
    try broadcast.send(1)
    XCTAssertThrowsError(try broadcast.send(2)) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertEqual(other.poll(), 1)
    XCTAssertNil(other.poll(), "2 reached nobody")
    XCTAssertEqual(full.poll(), 1)
    try broadcast.send(3)
    XCTAssertEqual(other.poll(), 3)
  }

  func testCancellingOrReleasingASubscriptionEndsOnlyThatSubscription() throws {
    let broadcast = BroadcastChannel<Int>(capacity: 1)
    let kept = broadcast.subscribe(capacity: 10, policy: .suspend)
    let cancelled = broadcast.subscribe()
    var released: CoChannel<Int>.Receiver? = broadcast.subscribe()
    XCTAssertEqual(broadcast.subscriberCount, 3)
    cancelled.cancel()
    released = nil
    XCTAssertNil(released)
    XCTAssertEqual(broadcast.subscriberCount, 1)
    for value in 1...3 { try broadcast.send(value) }  // no full subscriber left to wait for
    XCTAssertEqual([kept.poll(), kept.poll(), kept.poll()], [1, 2, 3])
    XCTAssertFalse(broadcast.isClosed)
  }

  func testCloseLetsSubscribersDrainThenEndsThemAndRefusesSends() throws {
    let broadcast = BroadcastChannel<String>()
    let subscriber = broadcast.subscribe()
    try broadcast.send("last")
    XCTAssertTrue(broadcast.close())
    XCTAssertFalse(broadcast.close())
    XCTAssertThrowsError(try broadcast.send("late")) {
      XCTAssertEqual($0 as? CoChannelError, .closed)
    }
    let drained = drain(subscriber)
    XCTAssertEqual(drained.elements, ["last"])
    XCTAssertTrue(drained.endedClosed)
    XCTAssertEqual(broadcast.subscriberCount, 0)
  }

  /// Senders on several threads: every subscriber sees the elements in the same order.
  func testConcurrentSendsReachEverySubscriberInOneOrder() {
    let broadcast = BroadcastChannel<Int>(capacity: 4)
    let subscribers = (0..<4).map { _ in broadcast.subscribe() }
    let group = DispatchGroup()
    let received = (0..<4).map { _ in Recorder<Int>() }
    for (index, subscriber) in subscribers.enumerated() {
      group.enter()
      DispatchQueue.global().startCoroutine {
        for value in subscriber.makeIterator() { received[index].append(value) }
        group.leave()
      }
    }
    let senders = DispatchGroup()
    for sender in 0..<4 {
      senders.enter()
      DispatchQueue.global().startCoroutine {
        for value in 0..<250 { try broadcast.send(sender * 1_000 + value) }
        senders.leave()
      }
    }
    XCTAssertEqual(senders.wait(timeout: .now() + 20), .success)
    broadcast.close()
    XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
    XCTAssertEqual(received[0].count, 1_000)
    for index in 1..<4 { XCTAssertEqual(received[index].elements, received[0].elements) }
  }
}
