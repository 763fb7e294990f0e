import Covenant
import CovenantTesting
import XCTest

/// Derived receivers as `select` cases: the same as plain receivers, with one rule more — a
/// case whose stage drops what it received is not performed, and the select goes on waiting.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
final class StreamSelectTests: XCTestCase {
  private func select(
    _ cases: @escaping @Sendable (inout CoChannelSelector<String>) -> Void,
    on scheduler: TestScheduler
  ) -> Recorder<String> {
    let outcome = Recorder<String>()
    scheduler.startCoroutine {
      do {
        outcome.append(try CoChannel.select { cases(&$0) })
      } catch {
        outcome.append("threw \(error)")
      }
    }
    return outcome
  }

  func testEveryDerivedReceiverCanBeASelectCaseThatIsReadyOrWaitedFor() {
    for stage in streamStageCases {
      let scheduler = TestScheduler()
      // Ready before the select starts.
      let ready = CoChannel<Int>()
      ready.offer(1)
      ready.offer(2)
      ready.offer(3)
      let derivedReady = stage.make(ready.receiver)
      let quiet = CoChannel<String>()
      let first = select(
        { select in
          select.onReceive(quiet) { $0 }
          select.onReceive(derivedReady) { "got \($0)" }
        }, on: scheduler)
      scheduler.advance(by: .seconds(1))
      XCTAssertEqual(first.count, 1, stage.name)
      XCTAssertTrue(
        first.elements.first?.hasPrefix("got") ?? false, "\(stage.name): \(first.elements)")

      // Waited for.
      let later = CoChannel<Int>()
      let derivedLater = stage.make(later.receiver)
      let second = select(
        { select in
          select.onReceive(quiet) { $0 }
          select.onReceive(derivedLater) { "got \($0)" }
        }, on: scheduler)
      scheduler.run()
      XCTAssertEqual(second.elements, [], stage.name)
      later.offer(10)
      later.offer(11)
      later.offer(12)
      scheduler.advance(by: .seconds(1))
      XCTAssertEqual(second.count, 1, stage.name)
      XCTAssertTrue(
        second.elements.first?.hasPrefix("got") ?? false, "\(stage.name): \(second.elements)")
      XCTAssertTrue(quiet.isEmpty)
      // The derived receivers are cancelled while this scheduler still runs: a pump blocked
      // sending what it buffers ends in its next slice, and coroutines left on a TestScheduler
      // that is let go never run again (LeakSanitizer counted their waiters at exit).
      derivedReady.cancel()
      derivedLater.cancel()
      ready.cancel()
      later.cancel()
      scheduler.advance(by: .seconds(1))
    }
  }

  func testAFilteredCaseThatReceivesARejectedElementGoesOnWaiting() {
    let scheduler = TestScheduler()
    let numbers = CoChannel<Int>()
    let names = CoChannel<String>()
    let evens = numbers.receiver.filter { $0.isMultiple(of: 2) }
    let outcome = select(
      { select in
        select.onReceive(evens) { "even \($0)" }
        select.onReceive(names) { "name \($0)" }
      }, on: scheduler)
    scheduler.run()
    numbers.offer(1)  // taken by the case, rejected: the select still waits on both
    scheduler.run()
    XCTAssertEqual(outcome.elements, [])
    XCTAssertTrue(numbers.isEmpty)
    names.offer("ada")
    scheduler.run()
    XCTAssertEqual(outcome.elements, ["name ada"])
    numbers.offer(4)
    XCTAssertEqual(evens.poll(), 4, "the select left no waiter behind")
  }

  func testAFilteredCaseThatRejectsWhileAddedIsKeptAndWaitedFor() {
    let scheduler = TestScheduler()
    let numbers = filledChannel([1, 3], closed: false)
    let evens = numbers.receiver.filter { $0.isMultiple(of: 2) }
    let outcome = select({ $0.onReceive(evens) { "even \($0)" } }, on: scheduler)
    scheduler.run()
    XCTAssertEqual(outcome.elements, [])
    numbers.offer(8)
    scheduler.run()
    XCTAssertEqual(outcome.elements, ["even 8"])
  }

  func testUnbiasedSelectAndTimeoutsWorkWithDerivedCases() {
    let scheduler = TestScheduler()
    let numbers = CoChannel<Int>()
    let evens = numbers.receiver.filter { $0.isMultiple(of: 2) }
    let outcome = Recorder<String>()
    scheduler.startCoroutine {
      outcome.append(
        try CoChannel.selectUnbiased { select in
          select.onReceive(evens) { "even \($0)" }
          select.onTimeout(.seconds(5)) { "timed out at \(milliseconds(scheduler.now))" }
        })
    }
    scheduler.advance(by: .seconds(1))
    numbers.offer(3)  // rejected: the select waits again, until its deadline
    scheduler.advance(by: .seconds(10))
    XCTAssertEqual(outcome.elements, ["timed out at 5000"])
  }

  func testASelectCaseSeesTheEndOfADerivedStream() {
    let scheduler = TestScheduler()
    let numbers = filledChannel([1, 2, 3, 4], closed: false)
    let two = numbers.receiver.prefix(2)
    let outcome = Recorder<String>()
    scheduler.startCoroutine {
      for _ in 0..<3 {
        outcome.append(
          try CoChannel.select { select in
            select.onReceiveResult(two) { "\($0)" }
          })
      }
    }
    scheduler.run()
    XCTAssertEqual(
      outcome.elements, ["success(1)", "success(2)", "failure(CovenantCore.CoChannelError.closed)"])
  }

  func testTimeoutEndsReachASelectAsTimeout() {
    let scheduler = TestScheduler()
    let quiet = CoChannel<Int>()
    let limited = quiet.receiver.timeout(.milliseconds(100))
    let outcome = select({ $0.onReceiveResult(limited) { "\($0)" } }, on: scheduler)
    scheduler.advance(by: .milliseconds(100))
    XCTAssertEqual(outcome.elements, ["failure(CovenantCore.CoChannelError.timeout)"])
  }
}
