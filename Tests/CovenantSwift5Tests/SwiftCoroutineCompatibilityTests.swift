import Covenant
import Foundation
import XCTest

// Issue 10: code written for SwiftCoroutine, in its own test suite's style (Swift 5 mode,
// XCTestExpectation fulfilled from coroutines, captured vars mutated in coroutine bodies),
// compiles and behaves as it does there.

private struct Oops: Error, Equatable {}

final class SwiftCoroutineCompatibilityTests: XCTestCase {
  // MARK: 6. Coroutine.start

  func testCoroutineStartRunsAtOnceOnTheCallingThreadUntilItsFirstSuspension() {
    let resumer = DispatchQueue(label: "resumer")
    let resumerKey = DispatchSpecificKey<String>()
    resumer.setSpecific(key: resumerKey, value: "resumer")
    let caller = Thread.current
    let promise = CoPromise<Int>()
    let done = expectation(description: "done")
    var steps: [String] = []

    Coroutine.start {
      steps.append("started on caller: \(Thread.current == caller)")
      let value = try promise.await()
      steps.append(
        "resumed with \(value) on resumer: \(DispatchQueue.getSpecific(key: resumerKey) == "resumer")"
      )
      done.fulfill()
    }
    XCTAssertEqual(steps, ["started on caller: true"])  // ran before `start` returned

    resumer.async { promise.success(7) }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(steps, ["started on caller: true", "resumed with 7 on resumer: true"])
  }

  func testCoroutineStartWithoutSuspensionFinishesBeforeReturning() {
    var ran = false
    Coroutine.start {
      XCTAssertTrue(Coroutine.isInsideCoroutine)
      ran = true
    }
    XCTAssertTrue(ran)
  }

  // MARK: 7. Exact signatures, as function values and with labels

  func testCoroutineFutureAsAFunctionValue() throws {
    let makeFuture: (@escaping () throws -> Int) -> CoFuture<Int> = DispatchQueue.global()
      .coroutineFuture
    let future = makeFuture { 5 }
    let sized = DispatchQueue.global().coroutineFuture(stackSize: 1 << 20) { 6 }
    let trailing = DispatchQueue.global().coroutineFuture { () -> Int in
      try Coroutine.delay(.milliseconds(1))
      return 7
    }
    let done = expectation(description: "done")
    var values: [Int] = []
    DispatchQueue.global().startCoroutine {
      values = [try future.await(), try sized.await(), try trailing.await(timeout: .seconds(5))]
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(values, [5, 6, 7])
  }

  func testStartCoroutineWithTaskLabelAndAsAFunctionValue() {
    let start: (CoScope?, @escaping () throws -> Void) -> Void = DispatchQueue.global()
      .startCoroutine(in:task:)
    let unlabeled: (CoScope?, @escaping () throws -> Void) -> Void = DispatchQueue.global()
      .startCoroutine
    let scope = CoScope()
    let done = expectation(description: "all ran")
    done.expectedFulfillmentCount = 6
    start(nil) { done.fulfill() }
    unlabeled(scope) { done.fulfill() }
    DispatchQueue.global().startCoroutine(task: { done.fulfill() })
    DispatchQueue.global().startCoroutine(in: scope, task: { done.fulfill() })
    DispatchQueue.global().startCoroutine(in: scope) { done.fulfill() }
    DispatchQueue.global().startCoroutine(stackSize: 1 << 20) { done.fulfill() }
    wait(for: [done], timeout: 5)
  }

  func testAwaitAndActorAsFunctionValues() {
    let hop: (() throws -> Int) throws -> Int = DispatchQueue.global().await
    let makeActor:
      (Int.Type, CoChannel<Int>.BufferType, @escaping (CoChannel<Int>.Receiver) throws -> Void) ->
        CoChannel<Int>.Sender = DispatchQueue.global().actor(of:bufferType:body:)
    let done = expectation(description: "done")
    var total = 0
    let sender = makeActor(Int.self, .unlimited) { mailbox in
      for value in mailbox.makeIterator() { total += value }
      done.fulfill()
    }
    sender.offer(1)
    sender.offer(2)
    sender.close()
    wait(for: [done], timeout: 5)
    XCTAssertEqual(total, 3)
    XCTAssertThrowsError(try hop { 1 }) { error in  // outside a coroutine
      XCTAssertEqual(error as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  // MARK: 8. Normalised buffer type

  func testBufferTypeIsNormalised() {
    XCTAssertEqual(CoChannel<Int>(capacity: 0).bufferType, .none)
    XCTAssertEqual(CoChannel<Int>(capacity: .max).bufferType, .unlimited)
    XCTAssertEqual(CoChannel<Int>(capacity: 3).bufferType, .buffered(capacity: 3))
    XCTAssertEqual(CoChannel<Int>(bufferType: .buffered(capacity: 0)).bufferType, .none)
    XCTAssertEqual(CoChannel<Int>(bufferType: .buffered(capacity: .max)).bufferType, .unlimited)
    XCTAssertEqual(CoChannel<Int>(capacity: 0).receiver.bufferType, .none)
  }

  // MARK: 9. A deallocated channel cancels what waits on it

  func testDeallocatedChannelCancelsPendingCallbacks() {
    var outcomes: [Result<Int, CoChannelError>] = []
    var canceled = 0
    var completed = 0
    weak var weakChannel: CoChannel<Int>?
    var future: CoFuture<Int>?
    do {
      let channel = CoChannel<Int>(capacity: 1)
      weakChannel = channel
      channel.whenReceive { outcomes.append($0) }
      channel.whenCanceled { canceled += 1 }
      channel.whenComplete { completed += 1 }
      future = channel.receiveFuture()
      XCTAssertTrue(outcomes.isEmpty)
    }
    XCTAssertNil(weakChannel)
    XCTAssertEqual(outcomes, [.failure(.canceled)])
    XCTAssertEqual(canceled, 1)
    XCTAssertEqual(completed, 1)
    guard case .failure(let error)? = future?.result else { return XCTFail("future not failed") }
    XCTAssertEqual(error as? CoChannelError, .canceled)
  }

  // MARK: Other SwiftCoroutine idioms

  func testSwiftCoroutineStyleIdioms() throws {
    let promise = CoPromise<Int>()
    let mapped = promise.map { $0 * 2 }
    var completions: [String] = []
    mapped.whenComplete { result in completions.append("mapped \(try! result.get())") }
    promise.whenSuccess { completions.append("success \($0)") }
    promise.success(21)
    XCTAssertEqual(completions, ["mapped 42", "success 21"])

    XCTAssertEqual(try CoFuture(value: 1).result?.get(), 1)
    XCTAssertThrowsError(try CoFuture<Int>(error: Oops()).result?.get())
    XCTAssertEqual(try CoFuture<Int>(result: .success(2)).result?.get(), 2)
    let callback = CoFuture<Int>(promise: { complete in complete(.success(3)) })
    XCTAssertEqual(try callback.result?.get(), 3)

    let channel = CoChannel<Int>()
    let scope = CoScope()
    let done = expectation(description: "done")
    var received: [Int] = []
    DispatchQueue.global().startCoroutine(in: scope) {
      let iterator = channel.makeIterator()
      while let value = iterator.next() { received.append(value) }
      let waited: Int = try Coroutine.await { callback in
        DispatchQueue.global().async { callback(9) }
      }
      received.append(waited)
      try Coroutine.delay(.milliseconds(1))
      done.fulfill()
    }
    DispatchQueue.global().startCoroutine {
      for value in 1...3 { try channel.awaitSend(value) }
      channel.close()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(received, [1, 2, 3, 9])
  }
}
