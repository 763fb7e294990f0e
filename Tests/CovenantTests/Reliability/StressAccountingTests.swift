import Covenant
import CovenantModel
import Dispatch
import Foundation
import Synchronization
import XCTest

/// Stress with exact accounting (issue 11, item 2): counts are asserted, not printed.
final class StressAccountingTests: XCTestCase {
  /// (a) 8 threads × 100,000 mixed operations on 1,000 shared promises: observers added
  /// (then / catch / always, before or after resolution) and resolutions (fulfil or reject,
  /// first wins). Every observer runs exactly once if its kind matches the promise's final
  /// state, never otherwise.
  func testEightThreadsOfMixedPromiseOperationsCountEveryCallbackOnce() {
    let threads = 8, operationsPerThread = 100_000, promiseCount = 1_000
    let promises = (0..<promiseCount).map { _ in Promise<Int>.pending() }
    let queue = DispatchQueue(label: "stress-a", attributes: .concurrent)
    let runs = CallbackLedger(capacity: threads * operationsPerThread)
    // Per thread: observers of each kind it added to each promise.
    let added = Locked([[Int]](repeating: [Int](repeating: 0, count: promiseCount * 3), count: threads))
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      var random = SplitMix64(seed: UInt64(thread) &+ 0xC0FFEE)
      var mine = [Int](repeating: 0, count: promiseCount * 3)
      for operation in 0..<operationsPerThread {
        let index = random.int(0...(promiseCount - 1))
        let promise = promises[index]
        let id = thread * operationsPerThread + operation
        switch random.int(0...9) {
        case 0...2:
          mine[index * 3] += 1
          promise.then(on: queue) { (_: Int) -> Void in runs.ran(id) }
        case 3...4:
          mine[index * 3 + 1] += 1
          promise.catch(on: queue) { _ in runs.ran(id) }
        case 5...6:
          mine[index * 3 + 2] += 1
          promise.always(on: queue) { runs.ran(id) }
        case 7:
          promise.reject(StressError.rejected)
        default:
          promise.fulfill(index)
        }
      }
      added.withLock { $0[thread] = mine }
    }
    for promise in promises { promise.fulfill(-1) }  // no-op for those already resolved
    XCTAssertTrue(waitForPromises(timeout: 120), "observers still pending")
    var expected = 0
    let perThread = added.withLock { $0 }
    for (index, promise) in promises.enumerated() {
      var (thens, catches, always) = (0, 0, 0)
      for counts in perThread {
        thens += counts[index * 3]
        catches += counts[index * 3 + 1]
        always += counts[index * 3 + 2]
      }
      expected += (promise.isFulfilled ? thens : catches) + always
    }
    XCTAssertEqual(runs.duplicates, 0, "a callback ran twice")
    XCTAssertEqual(runs.total, expected, "callbacks run vs callbacks due")
  }

  /// (b) 10,000 coroutines hopping among 4 schedulers (serial, concurrent, `OperationQueue`,
  /// a user-defined shuffling one), each awaiting the future of an earlier coroutine and
  /// fulfilling its own: all finish once, every hop lands on the scheduler asked for, and every
  /// value is its predecessor's plus one.
  func testTenThousandCoroutinesHoppingAmongFourSchedulers() {
    let count = 10_000
    let targets = HopTargets()
    let futures = (0..<count).map { _ in CoPromise<Int>() }
    let predecessor = (0..<count).map { $0 == 0 ? -1 : Int.random(in: max(0, $0 - 50)..<$0) }
    let finished = CallbackLedger(capacity: count)
    let misplaced = Locked(0)
    let group = DispatchGroup()
    for index in 0..<count {
      group.enter()
      targets.schedulers[index % 4].startCoroutine {
        defer { group.leave() }
        var random = SplitMix64(seed: UInt64(index))
        for _ in 0..<2 {
          let target = random.int(0...3)
          try targets.schedulers[target].await {
            if !targets.isOn(target) { misplaced.withLock { $0 += 1 } }
          }
        }
        let previous = predecessor[index] < 0 ? 0 : try futures[predecessor[index]].await()
        futures[index].success(previous + 1)
        finished.ran(index)
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 300), .success, "coroutines did not all finish")
    XCTAssertEqual(finished.total, count)
    XCTAssertEqual(finished.duplicates, 0, "a coroutine ran its ending twice")
    XCTAssertEqual(misplaced.withLock { $0 }, 0, "a hop landed on the wrong scheduler")
    for index in 0..<count {
      let previous = predecessor[index] < 0 ? 0 : (try? futures[predecessor[index]].result?.get()) ?? -100
      XCTAssertEqual(try? futures[index].result?.get(), previous + 1)
    }
  }

  /// (c) Channels with many producers and consumers and random close/cancel: 40 programs of up
  /// to 8 senders × 1,000 elements and 8 receivers, each checked like the model programs
  /// (every element received once or reported undelivered, FIFO per sender, right ending).
  func testManyProducersAndConsumersWithRandomCloseAndCancel() {
    let plan = SeedPlan(count: 40)
    for seed in plan.seeds {
      let program = ChannelProgram(seed: seed, maxSenders: 8, maxElements: 1_000, maxReceivers: 8)
      let (_, failures) = ChannelProgramRunner.run(program, timeout: 120)
      if !failures.isEmpty {
        XCTFail("\(SeedPlan.replayHint(seed))\n\(failures.joined(separator: "\n"))\nprogram: \(program)")
        return
      }
    }
  }
}

enum StressError: Error { case rejected }

/// Four schedulers, and how to tell which one the current code runs on.
final class HopTargets: @unchecked Sendable {
  private let key = DispatchSpecificKey<Int>()
  private let operations = OperationQueue()
  /// Serial queue, concurrent queue, `OperationQueue`, user-defined shuffling scheduler.
  let schedulers: [any CoroutineScheduler]

  init() {
    let serial = DispatchQueue(label: "hop.serial")
    let concurrent = DispatchQueue(label: "hop.concurrent", attributes: .concurrent)
    serial.setSpecific(key: key, value: 0)
    concurrent.setSpecific(key: key, value: 1)
    operations.maxConcurrentOperationCount = 3
    schedulers = [serial, concurrent, operations, ShufflingScheduler(seed: 7)]
  }

  /// Whether the caller runs on `schedulers[index]` (the shuffling one: on none of the others).
  func isOn(_ index: Int) -> Bool {
    switch index {
    case 0, 1: return DispatchQueue.getSpecific(key: key) == index
    case 2: return OperationQueue.current === operations
    default: return DispatchQueue.getSpecific(key: key) == nil && OperationQueue.current == nil
    }
  }
}

/// Counts callback runs by id: total, and ids that ran more than once.
final class CallbackLedger: @unchecked Sendable {
  private let lock = NSLock()
  private var seen: [UInt8]
  private var count = 0
  private var twice = 0

  init(capacity: Int) { seen = [UInt8](repeating: 0, count: capacity) }

  func ran(_ id: Int) {
    lock.withLock {
      count += 1
      if seen[id] != 0 { twice += 1 }
      seen[id] = 1
    }
  }

  var total: Int { lock.withLock { count } }
  var duplicates: Int { lock.withLock { twice } }
}
