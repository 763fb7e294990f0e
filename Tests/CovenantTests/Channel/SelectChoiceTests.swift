import Covenant
import Dispatch
import XCTest

/// Which case a select performs: first-ready order, `selectUnbiased`'s fair pick, disabled
/// cases, and what closed or cancelled channels look like to a select.
final class SelectChoiceTests: XCTestCase {
  // MARK: First-ready order and fairness

  func testFirstReadyOrderAlwaysTakesTheEarlierCase() {
    let results = CoChannel<Int>()
    let ticks = CoChannel<Int>()
    coRun {
      for round in 0..<200 {
        results.offer(round)
        ticks.offer(round)
        let picked: String = try CoChannel.select {
          $0.onReceive(results) { _ in "result" }
          $0.onReceive(ticks) { _ in "tick" }
        }
        XCTAssertEqual(picked, "result", "the written order decides")
      }
    }
    XCTAssertEqual(ticks.count, 200, "the later case never ran: every tick is still there")
  }

  func testUnbiasedPicksAmongReadyCasesAtRandom() {
    let channels = (0..<3).map { _ in CoChannel<Int>() }
    let rounds = 3_000
    let picks = Locked([0, 0, 0])
    coRun {
      for round in 0..<rounds {
        for channel in channels where channel.isEmpty { channel.offer(round) }
        let index: Int = try CoChannel.selectUnbiased {
          $0.onReceive(channels[0]) { _ in 0 }
          $0.onReceive(channels[1]) { _ in 1 }
          $0.onReceive(channels[2]) { _ in 2 }
        }
        picks.withLock { $0[index] += 1 }
      }
    }
    // Each count is binomial(3000, 1/3): mean 1000, standard deviation 26. 800 is 7.7
    // deviations away, a false failure about once in 10^14 runs.
    for (index, count) in picks.withLock({ $0 }).enumerated() {
      XCTAssertGreaterThan(count, 800, "case \(index) picked \(count) times of \(rounds)")
    }
    XCTAssertEqual(picks.withLock { $0.reduce(0, +) }, rounds, "exactly one case per round")
    XCTAssertEqual(
      channels.map(\.count).reduce(0, +), 2, "the two cases not picked in the last round")
  }

  func testUnbiasedDoesNotStarveTicksBehindABusyStream() {
    // A producer keeps `results` full; ticks arrive now and then, then the tick channel is
    // closed. First-ready order would never take a tick (nor see the close) while a result is
    // ready; the unbiased select takes every tick and sees the close.
    let results = CoChannel<Int>(capacity: 8)
    let ticks = CoChannel<Int>(capacity: 1)
    let queue = DispatchQueue(label: "busy", attributes: .concurrent)
    let ticksSeen = Locked(0)
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      var value = 0
      while true {
        try results.awaitSend(value)
        value += 1
      }
    }
    queue.startCoroutine {
      var seen = 0
      var running = true
      while running {
        try CoChannel.selectUnbiased {
          $0.onReceive(results) { _ in }
          $0.onReceiveResult(ticks) { tick in
            if case .success = tick { seen += 1 } else { running = false }
          }
        }
      }
      ticksSeen.withLock { $0 = seen }
      results.cancel()
      done.signal()
    }
    queue.startCoroutine {
      for tick in 0..<20 { try ticks.awaitSend(tick) }
      ticks.close()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
    XCTAssertEqual(ticksSeen.withLock { $0 }, 20, "every tick was taken despite the busy stream")
  }

  func testUnbiasedWaitsLikeSelect() {
    let a = CoChannel<Int>(bufferType: .none)
    let b = CoChannel<String>(bufferType: .none)
    let queue = CoQueue()
    let result = Box("")
    queue.start {
      result.value = try CoChannel.selectUnbiased {
        $0.onReceive(a) { "a\($0)" }
        $0.onReceive(b) { "b\($0)" }
      }
    }
    queue.flush()
    XCTAssertTrue(b.offer("!"), "the waiting select takes it")
    queue.flush()
    XCTAssertEqual(result.value, "b!")
    XCTAssertFalse(a.offer(1), "no waiter left on the other channel")
  }

  func testUnbiasedWithManyCases() {
    // More cases than fit the select's stack room (4) and its packed random order (16).
    let channels = (0..<20).map { _ in CoChannel<Int>() }
    channels[13].offer(13)
    channels[17].offer(17)
    coRun {
      var seen: Set<Int> = []
      for _ in 0..<2 {
        let value: Int = try CoChannel.selectUnbiased { select in
          for channel in channels { select.onReceive(channel) { $0 } }
        }
        seen.insert(value)
      }
      XCTAssertEqual(seen, [13, 17])
    }
  }

  // MARK: Cases tried as they are added

  func testAReadyCaseIsPerformedAsItIsAddedAndLaterCasesAreIgnored() {
    let first = CoChannel<Int>()
    let second = CoChannel<Int>()
    first.offer(1)
    second.offer(2)
    let order = Locked([String]())
    coRun {
      try CoChannel.select { select in
        order.withLock { $0.append("adding first") }
        select.onReceive(first) { _ in order.withLock { $0.append("first's body") } }
        order.withLock { $0.append("adding second") }
        select.onReceive(second) { _ in order.withLock { $0.append("second's body") } }
      }
    }
    XCTAssertEqual(order.withLock { $0 }, ["adding first", "first's body", "adding second"])
    XCTAssertEqual(second.poll(), 2, "the later case consumed nothing")
  }

  func testAThrowingBuildPerformsNothingAndLeavesNoWaiter() {
    let pending = CoChannel<Int>(bufferType: .none)
    coRun {
      XCTAssertThrowsError(
        try CoChannel.select { select in
          select.onReceive(pending) { $0 }
          throw TestError(3)
        }
      ) { XCTAssertEqual($0 as? TestError, TestError(3)) }
    }
    XCTAssertFalse(pending.offer(1), "no receiver left behind")
  }

  /// `select` performs a ready case as it is added: a closure that throws afterwards has
  /// still performed it, and the element went to that case's body (nothing is lost);
  /// `selectUnbiased`, which adds every case before trying any, performs nothing.
  func testABuildThrowingAfterAReadyCaseHasRunItsBodyAndUnbiasedPerformsNone() {
    let ready = CoChannel<Int>(capacity: 2)
    XCTAssertTrue(ready.offer(1))
    XCTAssertTrue(ready.offer(2))
    let received = Locked([Int]())
    coRun {
      XCTAssertThrowsError(
        try CoChannel.select { select in
          select.onReceive(ready) { value in received.withLock { $0.append(value) } }
          throw TestError(4)
        }
      ) { XCTAssertEqual($0 as? TestError, TestError(4)) }
      XCTAssertThrowsError(
        try CoChannel.selectUnbiased { select in
          select.onReceive(ready) { value in received.withLock { $0.append(-value) } }
          throw TestError(5)
        }
      ) { XCTAssertEqual($0 as? TestError, TestError(5)) }
    }
    XCTAssertEqual(received.withLock { $0 }, [1], "select's case ran once; unbiased's never")
    XCTAssertEqual(ready.poll(), 2, "the first element went to the body, the second stayed")
    XCTAssertNil(ready.poll())
  }

  func testManyCasesWaitAndLargeElements() {
    // Eight cases (past the select's stack room), a send of an element too large to be kept
    // inline, all waiting until one completes.
    struct Large: Equatable {
      var a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8
    }
    let inputs = (0..<6).map { _ in CoChannel<Int>(bufferType: .none) }
    let large = CoChannel<Large>(bufferType: .none)
    let other = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let result = Box("")
    queue.start {
      result.value = try CoChannel.select { select in
        for (index, input) in inputs.enumerated() {
          select.onReceive(input) { "input \(index): \($0)" }
        }
        select.onSend(large, Large()) { "sent large" }
        select.onReceive(other) { "other \($0)" }
      }
    }
    queue.flush()
    XCTAssertEqual(large.poll(), Large(), "the waiting send case delivered the large element")
    queue.flush()
    XCTAssertEqual(result.value, "sent large")
    for input in inputs { XCTAssertFalse(input.offer(0), "no waiter left") }
    XCTAssertFalse(other.offer(0), "no waiter left")
  }

  func testMappedReceiverWaits() {
    let words = CoChannel<String>(bufferType: .none)
    let queue = CoQueue()
    let result = Box(0)
    queue.start {
      result.value = try CoChannel.select { $0.onReceive(words.map { $0.count }) { $0 } }
    }
    queue.flush()
    XCTAssertTrue(words.offer("four"))
    queue.flush()
    XCTAssertEqual(result.value, 4)
  }

  // MARK: Disabled cases

  func testANilChannelLeavesItsCaseOut() {
    let ready = CoChannel<Int>()
    ready.offer(5)
    let disabled: CoChannel<Int>? = nil
    let disabledSender: CoChannel<Int>.Sender? = nil
    let disabledReceiver: CoChannel<Int>.Receiver? = nil
    coRun {
      let value: String = try CoChannel.select {
        $0.onReceive(disabled) { "disabled \($0)" }
        $0.onReceiveResult(disabledReceiver) { _ in "disabled receiver" }
        $0.onSend(disabledSender, 1) { "disabled sender" }
        $0.onReceive(ready) { "ready \($0)" }
      }
      XCTAssertEqual(value, "ready 5")
      let fallback: String = try CoChannel.select {
        $0.onReceive(disabled) { "disabled \($0)" }
        $0.onDefault { "default" }
      }
      XCTAssertEqual(fallback, "default", "only disabled cases: the default runs")
    }
  }

  func testAnIfLeavesACaseOut() {
    let a = CoChannel<Int>()
    let b = CoChannel<Int>()
    a.offer(1)
    b.offer(2)
    coRun {
      for takeA in [false, true] {
        let value: Int = try CoChannel.select { select in
          if takeA { select.onReceive(a) { $0 } }
          select.onReceive(b) { $0 }
        }
        XCTAssertEqual(value, takeA ? 1 : 2)
      }
    }
  }

  // MARK: Closed and cancelled channels

  func testClosedChannelKeepsItsCaseReadyUntilLeftOut() {
    // The livelock of the pipeline in the docs: once `events` is closed its case is ready on
    // every round. Leaving it out (nil) after seeing `.closed` lets the select wait on the
    // other channel instead of spinning.
    let events = CoChannel<Int>()
    let ticks = CoChannel<Int>(bufferType: .none)
    events.offer(1)
    events.close()
    let queue = CoQueue()
    let log = Locked([String]())
    queue.start {
      var open: CoChannel<Int>? = events
      var rounds = 0
      while rounds < 3 {
        rounds += 1
        try CoChannel.select {
          $0.onReceiveResult(open) { result in
            switch result {
            case .success(let value): log.withLock { $0.append("event \(value)") }
            case .failure(let error):
              log.withLock { $0.append("events \(error)") }
              open = nil
            }
          }
          $0.onReceive(ticks) { tick in log.withLock { $0.append("tick \(tick)") } }
        }
      }
    }
    queue.flush()
    XCTAssertEqual(log.withLock { $0 }, ["event 1", "events closed"], "then it waits on ticks")
    XCTAssertTrue(ticks.offer(7))
    queue.flush()
    XCTAssertEqual(log.withLock { $0 }, ["event 1", "events closed", "tick 7"])
  }

  func testCancelledChannelIsReadyWithCanceled() {
    let canceled = CoChannel<Int>(capacity: 1)
    canceled.cancel()
    coRun {
      let received: Result<Int, CoChannelError> = try CoChannel.select {
        $0.onReceiveResult(canceled) { $0 }
      }
      XCTAssertEqual(received, .failure(.canceled))
      XCTAssertThrowsError(try CoChannel.select { $0.onSend(canceled, 1) }) {
        XCTAssertTrue(isChannelError($0, .canceled))
      }
      XCTAssertThrowsError(
        try CoChannel.selectUnbiased { $0.onReceive(canceled) { _ in } }
      ) { XCTAssertTrue(isChannelError($0, .canceled)) }
    }
  }

  func testCancellingAChannelWakesAWaitingSelect() {
    let a = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let result = Box("")
    queue.start {
      result.value = try CoChannel.select { $0.onReceiveResult(a) { "\($0)" } }
    }
    queue.flush()
    a.cancel()
    queue.flush()
    XCTAssertEqual(result.value, "\(Result<Int, CoChannelError>.failure(.canceled))")
  }
}

/// Send cases keep their element in the select's stack room when it fits, in a box when it does
/// not (too large or too aligned); every shape is delivered once and released once.
final class SelectPayloadShapeTests: XCTestCase {
  private final class Tracked: @unchecked Sendable {
    let value: Int
    init(_ value: Int) { self.value = value }
  }

  private struct Wide: Equatable, Sendable {
    var a = 1, b = 2, c = 3, d = 4, e = 5
  }

  private func sendThroughWaitingSelect<T: Equatable & Sendable>(_ element: T) -> T? {
    let channel = CoChannel<T>(bufferType: .none)
    let other = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let sent = Box(false)
    queue.start {
      try CoChannel.select {
        $0.onReceive(other) { _ in }
        $0.onSend(channel, element) { sent.value = true }
      }
    }
    queue.flush()
    let received = channel.poll()
    queue.flush()
    XCTAssertTrue(sent.value)
    XCTAssertFalse(other.offer(0), "the losing case left no waiter")
    return received
  }

  func testEveryElementShapeIsDeliveredIntact() {
    XCTAssertEqual(sendThroughWaitingSelect(7), 7)
    XCTAssertEqual(sendThroughWaitingSelect("a string of some length"), "a string of some length")
    XCTAssertEqual(sendThroughWaitingSelect(Wide()), Wide())  // boxed: too large
    // Boxed: 16-byte aligned.
    XCTAssertEqual(sendThroughWaitingSelect(SIMD4<Double>(1, 2, 3, 4)), SIMD4(1, 2, 3, 4))
    let tracked = sendThroughWaitingSelect(ObjectIdentifier(Tracked.self))
    XCTAssertEqual(tracked, ObjectIdentifier(Tracked.self))
  }

  private final class WeakRefs: @unchecked Sendable {
    weak var small: Tracked?
    weak var large: Tracked?
  }

  func testLosingSendCasesReleaseTheirElements() {
    let refs = WeakRefs()
    let ready = CoChannel<Int>()
    coRun {
      for _ in 0..<2 {
        ready.offer(1)
        let smallElement = Tracked(1)
        let largeElement = (Tracked(2), Wide())
        refs.small = smallElement
        refs.large = largeElement.0
        let full = CoChannel<Tracked>(bufferType: .none)
        let fullLarge = CoChannel<(Tracked, Wide)>(bufferType: .none)
        try CoChannel.select {
          $0.onSend(full, smallElement) {}  // kept, then discarded
          $0.onSend(fullLarge, largeElement) {}  // kept in a box, then discarded
          $0.onReceive(ready) { _ in }
        }
      }
    }
    XCTAssertNil(refs.small, "the kept small element was released")
    XCTAssertNil(refs.large, "the boxed element was released")
  }
}
