import Covenant
import CovenantTesting
import XCTest

/// What every operator shares (the Streams article's rules): an upstream close or error
/// reaches the consumer once; cancelling a derived receiver cancels what it consumes, unless
/// that is shared.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
final class StreamEndsTests: XCTestCase {
  func testAnUpstreamCloseEndsEveryStageWithClosedAfterItsElements() {
    for stage in streamStageCases {
      let upstream = filledChannel([1, 2, 3])
      let derived = stage.make(upstream.receiver)
      let result = drain(derived)
      XCTAssertTrue(result.endedClosed, "\(stage.name): \(String(describing: result.end))")
      if stage.passesElementsThrough {
        XCTAssertEqual(result.elements, [1, 2, 3], stage.name)
      } else {
        XCTAssertFalse(result.elements.isEmpty, stage.name)
      }
      // The end stays: every later receive meets it too.
      XCTAssertNil(derived.poll(), stage.name)
      XCTAssertTrue(derived.isClosed, stage.name)
      XCTAssertFalse(derived.isCanceled, stage.name)
    }
  }

  func testAnUpstreamCancelReachesTheConsumerOnceAsCanceled() {
    for stage in streamStageCases {
      let scheduler = TestScheduler()
      let upstream = CoChannel<Int>()
      let derived = stage.make(upstream.receiver)
      let ends = Recorder<String>()
      let received = Recorder<Int>()
      scheduler.startCoroutine {
        while true {
          do {
            received.append(try derived.awaitReceive())
          } catch {
            ends.append("\(error)")
            // A second receive meets the same end.
            do { _ = try derived.awaitReceive() } catch { ends.append("then \(error)") }
            return
          }
        }
      }
      scheduler.run()
      upstream.offer(7)
      scheduler.advance(by: .milliseconds(100))
      upstream.cancel()
      scheduler.advance(by: .milliseconds(100))
      XCTAssertEqual(ends.elements, ["canceled", "then canceled"], stage.name)
      XCTAssertTrue(derived.isCanceled, stage.name)
    }
  }

  func testCancellingADerivedReceiverCancelsWhatItConsumes() {
    for stage in streamStageCases {
      let upstream = CoChannel<Int>()
      let derived = stage.make(upstream.receiver)
      let cancelCallbacks = Recorder<Int>()
      derived.whenCanceled { cancelCallbacks.append(1) }
      derived.cancel()
      XCTAssertTrue(upstream.isCanceled, stage.name)
      XCTAssertTrue(derived.isCanceled, stage.name)
      XCTAssertNil(derived.poll(), stage.name)
      XCTAssertEqual(cancelCallbacks.count, 1, stage.name)
      XCTAssertFalse(upstream.offer(1), stage.name)
    }
  }

  func testCancellingAStageOfASubscriptionEndsOnlyThatSubscription() throws {
    for stage in streamStageCases {
      let scheduler = TestScheduler()
      let broadcast = BroadcastChannel<Int>()
      let derived = stage.make(broadcast.subscribe())
      let other = broadcast.subscribe()
      XCTAssertEqual(broadcast.subscriberCount, 2, stage.name)
      derived.cancel()
      XCTAssertEqual(broadcast.subscriberCount, 1, stage.name)
      XCTAssertFalse(broadcast.isClosed, stage.name)
      try broadcast.send(5)
      XCTAssertEqual(other.poll(), 5, stage.name)
      broadcast.close()
      let rest = drain(other, on: scheduler)
      XCTAssertTrue(rest.endedClosed, stage.name)
    }
  }

  func testATimeoutUpstreamEndsEveryStageWithTimeoutOnce() {
    for stage in streamStageCases {
      let scheduler = TestScheduler()
      let upstream = CoChannel<Int>()
      let derived = stage.make(upstream.receiver.timeout(.seconds(10)))
      let timeline = record(derived, on: scheduler)
      scheduler.run()
      upstream.offer(1)
      scheduler.advance(by: .seconds(60))
      XCTAssertEqual(timeline.end?.error, "timeout", stage.name)
      XCTAssertTrue(upstream.isCanceled, "\(stage.name): the timeout cancels what it reads")
      XCTAssertFalse(derived.isCanceled, stage.name)
    }
  }
}
