import Covenant
import CovenantTesting
import Foundation
import XCTest

/// Stands in for NSManagedObjectContext on Linux: a class with a `perform` that takes a plain,
/// non-Sendable closure.
final class ManagedObjectContextStandIn {
  private let queue = DispatchQueue(label: "context")
  func perform(_ block: @escaping () -> Void) {
    let block = BlockBox(block)
    queue.async { block.run() }
  }
}

/// The stand-in's own plumbing (a real NSManagedObjectContext does this internally).
private final class BlockBox: @unchecked Sendable {
  let run: () -> Void
  init(_ run: @escaping () -> Void) { self.run = run }
}

// `CoroutineScheduler`'s documented example: the seed's conformance, exactly as written, in Swift 5 mode.
extension ManagedObjectContextStandIn: CoroutineScheduler {
  func scheduleTask(_ task: @escaping () -> Void) { perform(task) }
}

/// SwiftCoroutine-style client code in Swift 5 language mode: captured local `var`s mutated in
/// coroutine bodies and callbacks, non-Sendable values, the README seed examples.
final class CoroutineSeedTests: XCTestCase {
  func testCoroutineOnSeedSchedulerMutatesCapturedLocals() {
    let context = ManagedObjectContextStandIn()
    var steps: [String] = []
    let done = expectation(description: "done")
    context.startCoroutine {
      steps.append("start")
      let value = try Promise<Int>(on: .global()) { 20 }.await()
      let doubled: Int = try Coroutine.await { callback in
        DispatchQueue.global().async { callback(value * 2) }
      }
      steps.append("got \(doubled)")
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(steps, ["start", "got 40"])
  }

  func testSeedFutureReduce() throws {
    let array = (1...4).map { value in
      DispatchQueue.global().coroutineFuture { () -> Int in
        try Coroutine.delay(.milliseconds(1))
        return value
      }
    }
    let sum = CoFuture { try array.reduce(0) { try $0 + $1.await() } }
    XCTAssertEqual(try CovenantTesting.wait(for: sum, timeout: 5), 10)
  }

  func testSeedChannelProducerConsumer() {
    let channel = CoChannel<Int>(capacity: 1)
    var received: [Int] = []
    let done = expectation(description: "consumer done")
    DispatchQueue.global().startCoroutine {
      for i in 0..<100 { try channel.awaitSend(i) }
      channel.close()
    }
    DispatchQueue.global().startCoroutine {
      for i in channel.makeIterator() { received.append(i) }
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(received, Array(0..<100))
  }

  func testScopeOwnedByAnObjectCancelsOnDeinit() {
    final class Owner {
      let scope = CoScope()
      var finished = false
    }
    var owner: Owner? = Owner()
    let started = expectation(description: "started")
    let threw = expectation(description: "await threw canceled")
    DispatchQueue.global().startCoroutine(in: owner!.scope) {
      started.fulfill()
      do {
        try Coroutine.delay(.seconds(30))
      } catch {
        XCTAssertEqual(error as? CoroutineError, .canceled)
        threw.fulfill()
      }
    }
    // Running (cancelled before it started, it would never run its body at all).
    wait(for: [started], timeout: 5)
    owner = nil  // deinit of its scope cancels the coroutine
    wait(for: [threw], timeout: 5)
  }
}
