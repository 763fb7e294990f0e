import Covenant
import CovenantTesting
import Dispatch
import XCTest

/// A channel holding `elements`, closed after them unless `closed` is false.
func filledChannel<T>(_ elements: [T], closed: Bool = true) -> CoChannel<T> {
  let channel = CoChannel<T>()
  for element in elements { channel.offer(element) }
  if closed { channel.close() }
  return channel
}

/// What a receiver gave until it ended, and how it ended.
struct Drained<T> {
  var elements: [T]
  /// The error that ended it; `nil` if it had not ended when the scheduler ran out of work.
  var end: (any Error)?

  var endedClosed: Bool { (end as? CoChannelError) == .closed }
}

/// Receives from `receiver` until it ends, in a coroutine on `scheduler` (run, with its clock
/// moved an hour on, until it has nothing left to do).
func drain<T: Sendable>(
  _ receiver: CoChannel<T>.Receiver, on scheduler: TestScheduler = TestScheduler()
)
  -> Drained<T>
{
  let elements = Recorder<T>()
  let end = Recorder<String>()
  let ending = Locked<(any Error)?>(nil)
  scheduler.startCoroutine {
    do {
      while true { elements.append(try receiver.awaitReceive()) }
    } catch {
      ending.withLock { $0 = error }
      end.append("\(error)")
    }
  }
  // Long enough for every timer the stages of these tests arm; the clock is virtual.
  scheduler.advance(by: .seconds(3_600))
  return Drained(elements: elements.elements, end: ending.withLock { $0 })
}

/// Virtual milliseconds of a `TestScheduler`'s clock.
func milliseconds(_ time: DispatchTimeInterval) -> Int {
  switch time {
  case .nanoseconds(let n): return n / 1_000_000
  case .microseconds(let n): return n / 1_000
  case .milliseconds(let n): return n
  case .seconds(let n): return n * 1_000
  default: return -1
  }
}

/// What a consumer on a `TestScheduler` received, each element with the virtual time (in
/// milliseconds) it arrived at, and how the stream ended (with its time).
final class Timeline<T: Sendable>: Sendable {
  private let state = Locked<(entries: [(T, Int)], end: (String, Int)?)>(([], nil))

  var entries: [(T, Int)] { state.withLock { $0.entries } }
  var times: [Int] { entries.map(\.1) }
  var end: (error: String, time: Int)? { state.withLock { $0.end.map { ($0.0, $0.1) } } }

  fileprivate func append(_ element: T, at time: Int) {
    state.withLock { $0.entries.append((element, time)) }
  }
  fileprivate func finish(_ error: any Error, at time: Int) {
    state.withLock { $0.end = ("\(error)", time) }
  }
}

extension Timeline where T: Equatable {
  /// The elements and their times, for one assertion.
  var values: [T] { entries.map(\.0) }
}

/// Starts a consumer of `receiver` on `scheduler` that records each element with its virtual
/// time (see `Timeline`).
func record<T: Sendable>(_ receiver: CoChannel<T>.Receiver, on scheduler: TestScheduler)
  -> Timeline<T>
{
  let timeline = Timeline<T>()
  scheduler.startCoroutine {
    do {
      while true {
        let element = try receiver.awaitReceive()
        timeline.append(element, at: milliseconds(scheduler.now))
      }
    } catch {
      timeline.finish(error, at: milliseconds(scheduler.now))
    }
  }
  return timeline
}

/// Starts a producer on `scheduler` that sends each value at its virtual time (milliseconds),
/// then closes `channel` at `closeAt` if given.
func produce<T: Sendable>(
  _ events: [(at: Int, value: T)], into channel: CoChannel<T>, closeAt: Int? = nil,
  on scheduler: TestScheduler
) {
  scheduler.startCoroutine {
    var now = 0
    for event in events {
      if event.at > now { try Coroutine.delay(.milliseconds(event.at - now)) }
      now = event.at
      try channel.awaitSend(event.value)
    }
    if let closeAt {
      if closeAt > now { try Coroutine.delay(.milliseconds(closeAt - now)) }
      channel.close()
    }
  }
}

/// Starts the stage behind `receiver` on `scheduler` (a poll from a coroutine there), before
/// anything is ready upstream; the test runs the scheduler.
func startStage<T>(_ receiver: CoChannel<T>.Receiver, on scheduler: TestScheduler) {
  scheduler.startCoroutine { XCTAssertNil(receiver.poll(), "nothing was ready yet") }
}
