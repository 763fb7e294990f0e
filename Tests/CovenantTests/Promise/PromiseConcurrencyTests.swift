import Covenant
import Dispatch
import XCTest

final class PromiseConcurrencyTests: PromiseTestCase {
  /// 10,000 promises fulfilled from two threads while two other threads add observers: every
  /// observer runs exactly once, and the dispatch group empties.
  func testObserversAddedWhileFulfillingFromOtherThreadsRunExactlyOnce() {
    let count = 10_000
    let promises = (0..<count).map { _ in Promise<Int>() }
    let runs = (0..<count).map { _ in Counter() }
    let observed = Counter()
    let target = DispatchQueue(label: "covenant.test.observers", attributes: .concurrent)
    let shared = UncheckedBox((promises, runs))

    DispatchQueue.concurrentPerform(iterations: 4) { worker in
      let (promises, runs) = shared.value
      switch worker {
      case 0, 1:  // fulfil even / odd indices
        for index in stride(from: worker, to: count, by: 2) { promises[index].fulfill(index) }
      default:  // observe, ascending / descending
        let order = worker == 2 ? Array(0..<count) : Array((0..<count).reversed())
        for index in order {
          promises[index].then(on: target) { value in
            if value == index { runs[index].add(1) }
            observed.add(1)
          }
        }
      }
    }

    XCTAssertTrue(waitForPromises(timeout: 20), "DispatchGroup.promises did not empty")
    XCTAssertEqual(observed.value, 2 * count)
    XCTAssertTrue(runs.allSatisfy { $0.value == 2 }, "an observer ran twice or never")
  }

  /// Many threads race to resolve one promise: exactly one outcome, seen by every observer.
  func testFirstResolutionWinsAcrossThreads() {
    let q = queue
    var trials: [(Promise<Int>, Recorder<Int>)] = []
    for _ in 0..<100 {
      let promise = Promise<Int>()
      let seen = Recorder<Int>()
      promise.then(on: q.queue) { seen.append($0) }.catch(on: q.queue) { _ in seen.append(-1) }
      DispatchQueue.concurrentPerform(iterations: 8) { worker in
        if worker % 3 == 0 { promise.reject(TestError(worker)) } else { promise.fulfill(worker) }
        promise.then(on: q.queue) { seen.append($0) }.catch(on: q.queue) { _ in seen.append(-1) }
      }
      trials.append((promise, seen))
    }
    settle()
    for (promise, seen) in trials {
      XCTAssertEqual(seen.elements, Array(repeating: promise.value ?? -1, count: 9))
    }
  }

  /// Chains on a concurrent queue from many threads at once.
  func testConcurrentChainsOnConcurrentQueue() {
    let target = DispatchQueue(label: "covenant.test.concurrent", attributes: .concurrent)
    let total = Counter()
    DispatchQueue.concurrentPerform(iterations: 1_000) { index in
      Promise<Int>(on: target) { index }
        .then(on: target) { $0 + 1 }
        .then(on: target) { Promise($0 * 2) }
        .then(on: target) { total.add($0) }
    }
    XCTAssertTrue(waitForPromises(timeout: 20))
    XCTAssertEqual(total.value, (1...1_000).reduce(0) { $0 + 2 * $1 })
  }
}

/// An atomic counter that can live in an array.
private final class Counter: Sendable {
  private let atomic = InlineAtomic<Int>(0)
  func add(_ amount: Int) { atomic.wrappingAdd(amount, ordering: .relaxed) }
  var value: Int { atomic.load(ordering: .relaxed) }
}

/// Hands non-Sendable test fixtures to `concurrentPerform`; the elements are thread-safe.
private struct UncheckedBox<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}
