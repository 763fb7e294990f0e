import Covenant
import Dispatch
import Foundation
import XCTest

/// The non-suspending operations: futures, callbacks, `map`, iteration.
final class CoChannelOperationTests: XCTestCase {
  func testReceiveFuture() {
    let channel = CoChannel<Int>()
    channel.offer(1)
    XCTAssertEqual(try channel.receiveFuture().result?.get(), 1, "ready: complete at once")
    let pending = channel.receiveFuture()
    XCTAssertNil(pending.result)
    channel.offer(2)
    XCTAssertEqual(try pending.result?.get(), 2)
    let closed = channel.receiveFuture()
    channel.close()
    XCTAssertThrowsError(try closed.result?.get()) { XCTAssertTrue(isChannelError($0, .closed)) }
  }

  func testCancelledReceiveFutureConsumesNothing() {
    let channel = CoChannel<Int>(bufferType: .none)
    let abandoned = channel.receiveFuture()
    let next = channel.receiveFuture()
    abandoned.cancel()
    XCTAssertTrue(channel.offer(5))
    XCTAssertTrue(abandoned.isCanceled)
    XCTAssertEqual(try next.result?.get(), 5)
    XCTAssertFalse(channel.offer(6), "the cancelled future left no waiter")
  }

  /// Receive futures cancelled in the middle of the queue leave it in O(1) amortized (each
  /// was a scan of the queue: 100,000 of them took minutes), and the queue forgets them: the
  /// futures left are served in order, and nothing cancelled receives.
  func testManyReceiveFuturesCancelledFromTheMiddle() {
    let channel = CoChannel<Int>(bufferType: .none)
    let count = TestScale.stress(100_000)
    let futures = (0..<count).map { _ in channel.receiveFuture() }
    // Every one but the first and the last, from the one before the last back (the worst
    // order for a scan from the front), then the first of the middle ones forward.
    for future in futures[1..<(count - 1)].reversed() { future.cancel() }
    for future in futures[1..<(count - 1)] { XCTAssertTrue(future.isCanceled) }
    XCTAssertTrue(channel.offer(1))
    XCTAssertTrue(channel.offer(2))
    XCTAssertFalse(channel.offer(3), "only the two live futures were waiting")
    XCTAssertEqual(try futures[0].result?.get(), 1)
    XCTAssertEqual(try futures[count - 1].result?.get(), 2)
    // Futures cancelled between live coroutine waiters: the waiters keep their order.
    let queue = DispatchQueue(label: "receivers")
    let received = Locked([Int]())
    var more: [CoFuture<Int>] = []
    for index in 0..<10 {
      queue.startCoroutine {
        let value = try channel.awaitReceive()
        received.withLock { $0.append(value * 100 + index) }
      }
      queue.sync {}
      more += (0..<100).map { _ in channel.receiveFuture() }
    }
    for future in more { future.cancel() }
    for value in 0..<10 { XCTAssertTrue(channel.offer(value)) }
    queue.sync {}
    XCTAssertEqual(received.withLock { $0 }, (0..<10).map { $0 * 100 + $0 })
    XCTAssertFalse(channel.offer(10))
  }

  /// Waiters cancelled in the middle of a queue that also holds entries of another kind (a
  /// `sendFuture`'s element, a `whenReceive` callback): the compaction that drops their
  /// tombstones keeps those entries.
  func testCompactingAQueueKeepsItsOtherEntries() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = DispatchQueue(label: "compaction")
    // Senders: a future's element first, then four coroutines; three leave from the middle.
    channel.sendFuture(CoFuture(result: .success(100)))
    let senders = (0..<4).map { _ in CoScope() }
    for (index, scope) in senders.enumerated() {
      queue.startCoroutine(in: scope) { try? channel.awaitSend(index) }
    }
    queue.sync {}
    XCTAssertEqual(channel.count, 5)
    for index in [2, 1, 0] { senders[index].cancel() }
    queue.sync {}
    XCTAssertEqual(channel.count, 2)
    XCTAssertEqual(channel.poll(), 100, "the future's element is still first")
    XCTAssertEqual(channel.poll(), 3)
    // Receivers: a callback first, then four coroutines; three leave from the middle.
    let received = Locked([Int]())
    channel.whenReceive {
      if case .success(let value) = $0 { received.withLock { $0.append(value) } }
    }
    let receivers = (0..<4).map { _ in CoScope() }
    for scope in receivers {
      queue.startCoroutine(in: scope) {
        if let value = try? channel.awaitReceive() { received.withLock { $0.append(value * 10) } }
      }
    }
    queue.sync {}
    for index in [2, 1, 0] { receivers[index].cancel() }
    queue.sync {}
    XCTAssertTrue(channel.offer(7), "the callback still waits")
    XCTAssertTrue(channel.offer(8))
    queue.sync {}
    XCTAssertEqual(received.withLock { $0 }, [7, 80])
    withExtendedLifetime((senders, receivers)) {}
  }

  func testWhenReceive() {
    let channel = CoChannel<String>()
    let results = Recorder<String>()
    channel.offer("ready")
    channel.whenReceive { results.append((try? $0.get()) ?? "error") }
    channel.whenReceive { results.append((try? $0.get()) ?? "error") }
    XCTAssertEqual(results.elements, ["ready"])
    channel.offer("later")
    XCTAssertEqual(results.elements, ["ready", "later"])
    channel.whenReceive {
      if case .failure(let error) = $0 { results.append("\(error)") }
    }
    channel.close()
    XCTAssertEqual(results.elements, ["ready", "later", "\(CoChannelError.closed)"])
  }

  func testSendFuture() {
    let channel = CoChannel<Int>(capacity: 1)
    let first = CoPromise<Int>()
    let second = CoPromise<Int>()
    let failing = CoPromise<Int>()
    channel.sendFuture(first)
    channel.sendFuture(failing)
    channel.sendFuture(second)
    channel.sendFuture(CoFuture(result: .success(0)))
    XCTAssertEqual(channel.count, 1)
    failing.fail(TestError())
    first.success(1)
    second.success(2)
    XCTAssertEqual(channel.count, 3, "values without room wait in line")
    XCTAssertEqual(channel.poll(), 0)
    XCTAssertEqual(channel.poll(), 1)
    XCTAssertEqual(channel.poll(), 2)
    XCTAssertNil(channel.poll())
  }

  func testSendFutureToWaitingReceiverAndAfterClose() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let received = Box<Int?>(nil)
    queue.start { received.value = try channel.awaitReceive() }
    queue.flush()
    let promise = CoPromise<Int>()
    channel.sender.sendFuture(promise)
    promise.success(9)
    queue.flush()
    XCTAssertEqual(received.value, 9)

    let late = CoPromise<Int>()
    channel.sendFuture(late)
    channel.close()
    late.success(10)
    XCTAssertNil(channel.poll(), "dropped after close")
  }

  func testMap() {
    let channel = CoChannel<Int>()
    let strings = channel.map { "#\($0)" }
    let lengths = strings.map { $0.count }
    channel.offer(1)
    channel.offer(22)
    channel.offer(333)
    channel.offer(4444)
    XCTAssertEqual(strings.count, 4)
    XCTAssertEqual(strings.poll(), "#1")
    XCTAssertEqual(lengths.poll(), 3)
    XCTAssertEqual(try strings.receiveFuture().result?.get(), "#333")
    let viaCallback = Box<String?>(nil)
    strings.whenReceive { viaCallback.value = try? $0.get() }
    XCTAssertEqual(viaCallback.value, "#4444")
    channel.offer(5)
    coRun { XCTAssertEqual(try lengths.awaitReceive(), 2) }
    channel.offer(6)
    channel.close()
    coRun { XCTAssertEqual(Array(strings.makeIterator()), ["#6"]) }
    XCTAssertTrue(lengths.isClosed)
    let completed = Box(false)
    lengths.whenComplete { completed.value = true }
    XCTAssertTrue(completed.value)
    lengths.cancel()
    XCTAssertTrue(channel.isCanceled)
  }

  func testIteratorInsideCoroutineWaitsForElements() {
    let channel = CoChannel<Int>(capacity: 1)
    let collected = Recorder<Int>()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine {
      for value in channel.makeIterator() { collected.append(value) }
      done.signal()
    }
    DispatchQueue.global().startCoroutine {
      for value in 0..<20 { try channel.awaitSend(value) }
      channel.close()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(collected.elements, Array(0..<20))
  }

  func testSeedProducerConsumer() {
    // The guide's example: a producer and a consumer on one buffered(1) channel.
    let channel = CoChannel<Int>(capacity: 1)
    let collected = Recorder<Int>()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine {
      for i in 0..<100 { try channel.awaitSend(i) }
      channel.close()
    }
    DispatchQueue.global().startCoroutine {
      for i in channel.makeIterator() { collected.append(i) }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(collected.elements, Array(0..<100))
  }

  func testChannelIsReleasedWhenNothingUsesIt() {
    weak var weakChannel: CoChannel<Int>?
    weak var weakFuture: CoFuture<Int>?
    do {
      let channel = CoChannel<Int>(bufferType: .none)
      weakChannel = channel
      let future = channel.receiveFuture()
      weakFuture = future
      channel.sendFuture(CoPromise<Int>())
      coRun {
        try channel.awaitSend(1)  // received by the future
      }
    }
    waitUntil { weakChannel == nil }  // the coroutine drops its body just after signalling
    XCTAssertNil(weakFuture)
  }
}
