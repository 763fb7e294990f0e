import Covenant
import CovenantModel
import CovenantTesting
import XCTest

/// Random chains of stream operators (`StreamProgram`) checked against a reference over arrays:
/// every element, its virtual time, and the end with its time. Chains without a time operator
/// run again on real threads (a concurrent queue), checked for the same elements and end. A
/// failure prints the seed; `COVENANT_SEED=<seed> swift test --filter StreamModelTests`
/// replays that program.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
final class StreamModelTests: XCTestCase {
  func testRandomOperatorChainsMatchTheReference() {
    let plan = SeedPlan(count: TestScale.stress(600, sanitizerDivisor: 4))
    var elements = 0
    for seed in plan.seeds {
      let program = StreamProgram(seed: seed)
      let expected = program.expected
      let virtual = runInVirtualTime(program)
      elements += virtual?.events.count ?? 0
      var failure: String?
      if virtual != expected {
        failure = "virtual time: got \(virtual.map { "\($0)" } ?? "no end"), expected \(expected)"
      } else if !program.isTimed {
        let threaded = runOnThreads(program)
        if threaded?.events.map(\.value) != expected.events.map(\.value)
          || threaded?.end != expected.end
        {
          failure = "threads: got \(threaded.map { "\($0)" } ?? "no end"), expected \(expected)"
        }
      }
      if let failure {
        XCTFail("\(SeedPlan.replayHint(seed))\n\(failure)\nprogram: \(program)")
        return
      }
    }
    print(
      "stream programs: \(plan.seeds.count) checked, \(elements) elements, base seed \(SeedPlan.hex(plan.base))"
    )
  }

  /// Runs `program` on a `TestScheduler`: the consumer's trace, or `nil` if it never ended.
  private func runInVirtualTime(_ program: StreamProgram) -> StreamProgram.Trace? {
    let scheduler = TestScheduler()
    let source = CoChannel<Int>()
    var receiver = source.receiver
    for op in program.chain { receiver = StreamProgram.apply(op, to: receiver) }
    let trace = Locked<StreamProgram.Trace?>(nil)
    let consumer = receiver
    let style = program.consumer
    scheduler.startCoroutine {
      var events: [StreamProgram.Event] = []
      func now() -> UInt64 { UInt64(nanoseconds(scheduler.now)) }
      let end = Self.consume(consumer, style) { events.append(.init(value: $0, time: now())) }
      trace.withLock { $0 = .init(events: events, end: end, endTime: now()) }
    }
    let input = program.input
    let closeTime = program.closeTime
    scheduler.startCoroutine {
      var now: UInt64 = 0
      for event in input {
        if event.time > now { try Coroutine.delay(.nanoseconds(Int(event.time - now))) }
        now = event.time
        source.offer(event.value)
      }
      if closeTime > now { try Coroutine.delay(.nanoseconds(Int(closeTime - now))) }
      source.close()
    }
    scheduler.advance(by: .seconds(10))
    let result = trace.withLock { $0 }
    // Whatever the chain left behind (a cancelled upstream, a pump) ends with the test.
    receiver.cancel()
    source.cancel()
    scheduler.run()
    return result
  }

  /// Runs `program` with its consumer, producer and stages on a concurrent queue.
  private func runOnThreads(_ program: StreamProgram) -> StreamProgram.Trace? {
    let source = CoChannel<Int>(capacity: 2)
    var receiver = source.receiver
    for op in program.chain { receiver = StreamProgram.apply(op, to: receiver) }
    let consumer = receiver
    let style = program.consumer
    let queue = DispatchQueue(label: "StreamModelTests", attributes: .concurrent)
    let outcome = queue.coroutineFuture { () -> StreamProgram.Trace in
      var events: [StreamProgram.Event] = []
      let end = Self.consume(consumer, style) { events.append(.init(value: $0, time: 0)) }
      return .init(events: events, end: end, endTime: 0)
    }
    let input = program.input.map(\.value)
    queue.startCoroutine {
      do {
        for value in input { try source.awaitSend(value) }
        source.close()
      } catch {
        // The chain ended first (a prefix) and cancelled the source.
      }
    }
    defer { source.cancel() }
    return try? wait(for: outcome, timeout: 10)
  }

  /// Receives everything in the program's style; returns the end.
  private static func consume(
    _ receiver: CoChannel<Int>.Receiver, _ style: StreamProgram.Consumer,
    _ element: (Int) -> Void
  ) -> CoChannelError {
    do {
      switch style {
      case .awaitReceive:
        while true { element(try receiver.awaitReceive()) }
      case .select:
        while true {
          let outcome = try CoChannel.select { $0.onReceiveResult(receiver) { $0 } }
          element(try outcome.get())
        }
      case .values:
        while let value = try receiver.values.next() { element(value) }
        return .closed
      }
    } catch let error as CoChannelError {
      return error
    } catch {
      return .canceled
    }
  }
}

/// Nanoseconds of a `TestScheduler`'s clock.
func nanoseconds(_ time: DispatchTimeInterval) -> Int {
  switch time {
  case .nanoseconds(let n): return n
  case .microseconds(let n): return n * 1_000
  case .milliseconds(let n): return n * 1_000_000
  case .seconds(let n): return n * 1_000_000_000
  default: return -1
  }
}
