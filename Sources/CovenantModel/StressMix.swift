import Covenant
import Dispatch
import Foundation

/// Stress runs with exact accounting, shared by the tests and the soak. Each returns the
/// operations done and the violated invariants (empty when all held).
public enum StressMix {
  /// `threads` threads × `operationsPerThread` mixed operations on `promiseCount` shared
  /// promises: observers added (then / catch / always, before or after resolution) and
  /// resolutions (fulfil or reject, first wins). Every observer must run exactly once if its
  /// kind matches the promise's final state, never otherwise.
  public static func promiseOperations(
    threads: Int = 8, operationsPerThread: Int = 100_000, promiseCount: Int = 1_000, seed: UInt64
  ) -> (operations: Int, failures: [String]) {
    let promises = (0..<promiseCount).map { _ in Promise<Int>.pending() }
    let queue = DispatchQueue(label: "stress.promises", attributes: .concurrent)
    let runs = CallbackLedger(capacity: threads * operationsPerThread)
    let added = LockedValue([[Int]](repeating: [], count: threads))
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      var random = SplitMix64(seed: seed &+ UInt64(thread))
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
          promise.reject(ModelError(code: index))
        default:
          promise.fulfill(index)
        }
      }
      added.withLock { $0[thread] = mine }
    }
    for promise in promises { promise.fulfill(-1) }  // a no-op for those already resolved
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
    var failures: [String] = []
    // Every observer is dispatched through DispatchGroup.promises: once it is empty, all ran.
    if !waitForPromises(timeout: 300) { failures.append("observers still pending after 300 s") }
    if runs.total != expected { failures.append("callbacks: \(runs.total) ran, \(expected) due") }
    if runs.duplicates != 0 { failures.append("\(runs.duplicates) callbacks ran twice") }
    return (threads * operationsPerThread, failures)
  }

  /// `count` coroutines hopping among the four schedulers of `HopTargets` (two hops each, each
  /// checked to land where asked), each awaiting the future of an earlier coroutine and
  /// fulfilling its own with that value plus one. All must finish once, with the right values.
  public static func hoppingCoroutines(count: Int = 10_000, seed: UInt64) -> (
    operations: Int, failures: [String]
  ) {
    let targets = HopTargets(seed: seed)
    var random = SplitMix64(seed: seed)
    let futures = (0..<count).map { _ in CoPromise<Int>() }
    let predecessor = (0..<count).map { $0 == 0 ? -1 : random.int(max(0, $0 - 50)...($0 - 1)) }
    let finished = CallbackLedger(capacity: count)
    let misplaced = LockedValue(0)
    let group = DispatchGroup()
    for index in 0..<count {
      group.enter()
      targets.schedulers[index % 4].startCoroutine {
        defer { group.leave() }
        var random = SplitMix64(seed: seed &+ UInt64(index))
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
    var failures: [String] = []
    if group.wait(timeout: .now() + 300) == .timedOut {
      return (0, ["hang: \(count - finished.total) coroutines unfinished"])
    }
    if finished.total != count {
      failures.append("\(finished.total) of \(count) coroutines finished")
    }
    if finished.duplicates != 0 {
      failures.append("\(finished.duplicates) coroutines finished twice")
    }
    if misplaced.withLock({ $0 }) != 0 { failures.append("hops landed on the wrong scheduler") }
    for index in 0..<count {
      let previous =
        predecessor[index] < 0 ? 0 : (try? futures[predecessor[index]].result?.get()) ?? -100
      if (try? futures[index].result?.get()) != previous + 1 {
        failures.append("coroutine \(index): wrong value")
        break
      }
    }
    return (count * 4, failures)
  }
}

/// Four schedulers (serial queue, concurrent queue, `OperationQueue`, a user-defined shuffling
/// one), and how to tell which one the current code runs on.
public final class HopTargets: @unchecked Sendable {
  private let key = DispatchSpecificKey<Int>()
  private let operations = OperationQueue()
  /// The four schedulers, in the order above.
  public let schedulers: [any CoroutineScheduler]

  /// Fresh schedulers; `seed` drives the shuffling one.
  public init(seed: UInt64 = 7) {
    let serial = DispatchQueue(label: "hop.serial")
    let concurrent = DispatchQueue(label: "hop.concurrent", attributes: .concurrent)
    serial.setSpecific(key: key, value: 0)
    concurrent.setSpecific(key: key, value: 1)
    operations.maxConcurrentOperationCount = 3
    schedulers = [serial, concurrent, operations, ShufflingScheduler(seed: seed)]
  }

  /// Whether the caller runs on `schedulers[index]` (the shuffling one: on none of the others).
  public func isOn(_ index: Int) -> Bool {
    switch index {
    case 0, 1: return DispatchQueue.getSpecific(key: key) == index
    case 2: return OperationQueue.current === operations
    default: return DispatchQueue.getSpecific(key: key) == nil && OperationQueue.current == nil
    }
  }
}

/// Counts callback runs by id: the total, and ids that ran more than once.
public final class CallbackLedger: @unchecked Sendable {
  private let lock = NSLock()
  private var seen: [UInt8]
  private var count = 0
  private var twice = 0

  /// A ledger for ids `0..<capacity`.
  public init(capacity: Int) { seen = [UInt8](repeating: 0, count: capacity) }

  /// Records a run of callback `id`.
  public func ran(_ id: Int) {
    lock.withLock {
      count += 1
      if seen[id] != 0 { twice += 1 }
      seen[id] = 1
    }
  }

  /// Runs recorded.
  public var total: Int { lock.withLock { count } }
  /// Runs of ids that had already run.
  public var duplicates: Int { lock.withLock { twice } }
}

/// A value behind an `NSLock` (a pthread mutex, whose hand-overs ThreadSanitizer sees).
public final class LockedValue<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: T
  /// A lock around `value`.
  public init(_ value: T) { self.value = value }
  /// Runs `body` with exclusive access to the value.
  public func withLock<R>(_ body: (inout T) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
