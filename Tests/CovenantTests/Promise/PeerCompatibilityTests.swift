import Covenant
import CovenantTesting
import Foundation
import XCTest

// Issue 10, Swift 6 language mode: the google/promises and SwiftCoroutine shapes that must
// compile and behave as in the peers (their Swift 5 counterparts are in CovenantSwift5Tests).
// This module declares `extension String: Error {}` (PromiseThenTests.swift).

private enum Failure: Error, Equatable { case failed }

final class PeerCompatibilityTests: PromiseTestCase {
  // MARK: 1. Work blocks that only throw; promise-returning blocks adopt

  func testWorkBlockThatOnlyThrowsRejects() {
    let int = Promise<Int>(on: queue.queue) { throw Failure.failed }
    let void = Promise<Void>(on: queue.queue) { throw Failure.failed }
    let intDefaultQueue = Promise<Int> { throw Failure.failed }
    settle()
    XCTAssertEqual(int.error as? Failure, .failed)
    XCTAssertEqual(void.error as? Failure, .failed)
    XCTAssertEqual(intDefaultQueue.error as? Failure, .failed)
  }

  func testWorkBlockReturningAPromiseAdoptsWithoutAStatedType() throws {
    let inner = Promise<Int>()
    let adopted = Promise(on: queue.queue) { inner }
    let _: Promise<Int> = adopted
    let value = Promise(on: queue.queue) { 3 }
    inner.fulfill(4)
    XCTAssertEqual(try wait(for: adopted, timeout: 2), 4)
    XCTAssertEqual(try wait(for: value, timeout: 2), 3)
  }

  // MARK: 2. `Promise(value)` when `Value` conforms to `Error`; `Promise(future)`

  func testValueInitializerWinsForErrorConformingValueTypes() {
    XCTAssertEqual(Promise<String>("").value, "")
    XCTAssertTrue(Promise("text").isFulfilled)
    XCTAssertEqual(Promise<Int>(Failure.failed).error as? Failure, .failed)
    let future = CoPromise<Int>()
    let converted = Promise(future)
    let _: Promise<Int> = converted
    future.success(1)
    XCTAssertEqual(converted.value, 1)
  }

  // MARK: 3. Returned errors (more in PromiseThenTests)

  func testErrorValueWithoutContextRejects() {
    XCTAssertEqual(Promise(Failure.failed).error as? Failure, .failed)
  }

  func testReturnedErrorDecisionsStayRightAcrossManyTypes() {
    // Far more types than the decision cache has slots: evictions must not change an answer.
    var wrong: [String] = []
    func visit<T>(_: T.Type, depth: Int) {
      if Promise(Level<T>()).isRejected { wrong.append("\(Level<T>.self)") }
      if !Promise(ErrorLevel<T>()).isRejected { wrong.append("\(ErrorLevel<T>.self)") }
      if Promise("\(depth)").isRejected { wrong.append("String") }
      if depth > 0 { visit(Level<T>.self, depth: depth - 1) }
    }
    for _ in 0..<2 { visit(Int.self, depth: 400) }
    XCTAssertEqual(wrong, [])
  }

  // MARK: 4. Optional nil

  func testOptionalNilValueIsNil() {
    let promise = Promise<Int?>(nil)
    XCTAssertNil(promise.value as Any?)
    XCTAssertTrue(promise.isFulfilled)
    XCTAssertEqual(Promise<Int?>(2).value, 2)
    let nested = Promise<Int??>(.some(nil))
    XCTAssertNotNil(nested.value as Any?)  // only the outer optional is looked at
  }

  // MARK: 5. Same-typed `all` / `any` are tuples

  func testSameTypedAllAndAnyAreTuples() throws {
    let both = all(on: queue.queue, Promise(1), Promise(2))
    XCTAssertEqual(try wait(for: both.then(on: queue.queue) { pair in pair.0 * 10 + pair.1 }), 12)
    let outcomes = any(on: queue.queue, Promise(1), Promise<Int>(Failure.failed))
    XCTAssertEqual(try wait(for: outcomes).1.error as? Failure, .failed)
  }

  // MARK: 6. Coroutine.start

  func testCoroutineStartRunsAtOnceAndContinuesOnTheResumingThread() {
    let resumer = DispatchQueue(label: "resumer")
    let key = DispatchSpecificKey<Int>()
    resumer.setSpecific(key: key, value: 1)
    let steps = Recorder<String>()
    let future = CoPromise<Int>()
    let done = DispatchSemaphore(value: 0)
    Coroutine.start {
      steps.append("started")
      let value = try future.await()
      steps.append("resumed \(value) on resumer: \(DispatchQueue.getSpecific(key: key) == 1)")
      done.signal()
    }
    XCTAssertEqual(steps.elements, ["started"])
    resumer.async { future.success(5) }
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(steps.elements, ["started", "resumed 5 on resumer: true"])
  }

  func testCoroutineStartOutsideAndInsideACoroutine() {
    let ran = Recorder<Bool>()
    Coroutine.start { ran.append(Coroutine.isInsideCoroutine) }
    coRun {
      Coroutine.start { ran.append(Coroutine.isInsideCoroutine) }  // nested: runs at once too
      ran.append(true)
    }
    XCTAssertEqual(ran.elements, [true, true, true])
  }

  // MARK: 7. Exact signatures as function values (Swift 6: with @Sendable closures)

  func testSchedulerMethodsAsFunctionValues() throws {
    let makeFuture: (@escaping @Sendable () throws -> Int) -> CoFuture<Int> =
      DispatchQueue.global().coroutineFuture
    let start: (CoScope?, @escaping @Sendable () throws -> Void) -> Void =
      DispatchQueue.global().startCoroutine(in:task:)
    let done = DispatchSemaphore(value: 0)
    start(nil) { done.signal() }
    DispatchQueue.global().startCoroutine(in: nil, task: { done.signal() })
    DispatchQueue.global().startCoroutine { done.signal() }
    DispatchQueue.global().startCoroutine(stackSize: 65_536) { done.signal() }
    for _ in 0..<4 { XCTAssertEqual(done.wait(timeout: .now() + 5), .success) }
    XCTAssertEqual(try wait(for: makeFuture { 8 }), 8)
    XCTAssertEqual(try wait(for: DispatchQueue.global().coroutineFuture(stackSize: nil) { 9 }), 9)
  }

  // MARK: 8. Normalised buffer type

  func testBufferTypeIsNormalised() {
    XCTAssertEqual(CoChannel<Int>(capacity: 0).bufferType, .none)
    XCTAssertEqual(CoChannel<Int>(capacity: -1).bufferType, .none)
    XCTAssertEqual(CoChannel<Int>(capacity: .max).bufferType, .unlimited)
    XCTAssertEqual(CoChannel<Int>(bufferType: .buffered(capacity: 0)).bufferType, .none)
    XCTAssertEqual(
      CoChannel<Int>(bufferType: .buffered(capacity: .max)).sender.bufferType, .unlimited)
    XCTAssertEqual(CoChannel<Int>(capacity: .max).map { $0 }.bufferType, .unlimited)
  }

  // MARK: 9. A deallocated channel cancels what waits on it

  func testDeallocatedChannelCancelsWaitersForEveryBufferType() {
    let types: [CoChannel<Int>.BufferType] = [
      .none, .buffered(capacity: 2), .unlimited, .conflated,
    ]
    for bufferType in types {
      let received = Recorder<String>()
      let events = Recorder<String>()
      weak var weakChannel: CoChannel<Int>?
      var future: CoFuture<Int>?
      var mappedFuture: CoFuture<String>?
      do {
        let channel = CoChannel<Int>(bufferType: bufferType)
        weakChannel = channel
        channel.whenReceive { received.append("\($0)") }
        channel.receiver.whenReceive { received.append("\($0)") }
        channel.whenCanceled { events.append("canceled") }
        channel.whenComplete { events.append("complete") }
        future = channel.receiveFuture()
        mappedFuture = channel.map { "\($0)" }.receiveFuture()
        XCTAssertEqual(received.count, 0)
      }
      XCTAssertNil(weakChannel, "\(bufferType)")
      let canceled = "failure(\(String(reflecting: CoChannelError.canceled)))"  // names the module
      XCTAssertEqual(received.elements, Array(repeating: canceled, count: 2), "\(bufferType)")
      XCTAssertEqual(events.elements, ["canceled", "complete"], "\(bufferType)")
      XCTAssertTrue(isChannelError(errorOf(future), .canceled), "\(bufferType)")
      XCTAssertTrue(isChannelError(errorOf(mappedFuture), .canceled), "\(bufferType)")
    }
  }

  func testDeallocatedChannelDropsBufferedElementsAndCallsEachCallbackOnce() {
    weak var weakChannel: CoChannel<Int>?
    let received = Recorder<String>()
    do {
      let channel = CoChannel<Int>(capacity: 4)
      weakChannel = channel
      channel.offer(1)
      channel.whenReceive { received.append("\($0)") }  // gets the element at once
      channel.offer(2)
    }
    XCTAssertNil(weakChannel)
    XCTAssertEqual(received.elements, ["success(1)"])
  }
}

/// A value type, one per `T`.
private struct Level<T> {}

/// A type declared as an error, one per `T`.
private struct ErrorLevel<T>: Error {}

/// The error a completed future failed with, or `nil`.
private func errorOf<T>(_ future: CoFuture<T>?) -> (any Error)? {
  if case .failure(let error)? = future?.result { return error }
  return nil
}
