import Covenant
import Foundation
import XCTest

final class CoroutineSchedulerTests: XCTestCase {
  func testCoroutineOnSerialQueueAwaitsPromiseAndContinuesThere() {
    let (queue, key) = DispatchQueue.tagged("serial")
    let done = expectation(description: "done")
    let promise = Promise<Int>()
    queue.startCoroutine {
      XCTAssertTrue(Coroutine.isInsideCoroutine)
      XCTAssertEqual(DispatchQueue.getSpecific(key: key), "serial")
      let value = try promise.await()
      XCTAssertEqual(value, 7)
      XCTAssertEqual(DispatchQueue.getSpecific(key: key), "serial")
      done.fulfill()
    }
    queue.sync {}  // the coroutine waits
    promise.fulfill(7)
    wait(for: [done], timeout: 5)
  }

  func testCoroutinesOnConcurrentQueue() {
    let (queue, key) = DispatchQueue.tagged("concurrent", attributes: .concurrent)
    let count = 200
    let finished = HitCounter()
    let done = expectation(description: "done")
    done.expectedFulfillmentCount = count
    for index in 0..<count {
      queue.startCoroutine {
        let promise = Promise<Int>(on: .global()) { index * 2 }
        XCTAssertEqual(try promise.await(), index * 2)
        XCTAssertEqual(DispatchQueue.getSpecific(key: key), "concurrent")
        finished.increment()
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 10)
    XCTAssertEqual(finished.value, count)
  }

  func testCoroutineOnOperationQueue() {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 2
    let done = expectation(description: "done")
    queue.startCoroutine {
      let value = try Promise<String>(on: .global()) { "op" }.await()
      XCTAssertEqual(value, "op")
      XCTAssertNotNil(OperationQueue.current)
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
  }

  func testCoroutineOnRunLoop() {
    let thread = RunLoopThread.started()
    defer { thread.stop() }
    let done = expectation(description: "done")
    thread.runLoop.startCoroutine {
      XCTAssertTrue(Thread.current === thread.thread)
      let value = try Promise<Int>(on: .global()) { 5 }.await()
      XCTAssertEqual(value, 5)
      XCTAssertTrue(Thread.current === thread.thread)
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
  }

  func testCoroutineOnMainRunLoopWhileTestWaits() {
    let done = expectation(description: "done")
    RunLoop.main.startCoroutine {
      XCTAssertTrue(Thread.isMainThread)
      let value = try Promise<Int>(on: .global()) { 11 }.await()
      XCTAssertEqual(value, 11)
      XCTAssertTrue(Thread.isMainThread)
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
  }

  func testUserDefinedSchedulerLikeManagedObjectContext() {
    let context = PerformingContext()
    let done = expectation(description: "done")
    context.startCoroutine {
      XCTAssertTrue(context.isCurrent)
      let value = try Promise<Int>(on: .global()) { 9 }.await()
      XCTAssertEqual(value, 9)
      XCTAssertTrue(context.isCurrent)
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
  }

  func testSchedulerAwaitHopsAndComesBack() {
    let (home, homeKey) = DispatchQueue.tagged("home")
    let (away, awayKey) = DispatchQueue.tagged("away")
    let done = expectation(description: "done")
    home.startCoroutine {
      let label = try away.await { () -> String? in
        XCTAssertNil(DispatchQueue.getSpecific(key: homeKey))
        return DispatchQueue.getSpecific(key: awayKey)
      }
      XCTAssertEqual(label, "away")
      XCTAssertEqual(DispatchQueue.getSpecific(key: homeKey), "home")
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
  }

  func testThousandsOfCoroutinesHoppingBetweenSchedulers() {
    let schedulers = UnsafeTransfer<[any CoroutineScheduler]>([
      DispatchQueue(label: "a"), DispatchQueue(label: "b", attributes: .concurrent),
      DispatchQueue.global(), PerformingContext(),
    ]).value
    let count = 2_000
    let total = HitCounter()
    let done = expectation(description: "done")
    done.expectedFulfillmentCount = count
    let all = UnsafeTransfer(schedulers)
    for index in 0..<count {
      schedulers[index % schedulers.count].startCoroutine {
        for hop in 0..<4 {
          try all.value[(index + hop) % all.value.count].await { total.increment() }
        }
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 30)
    XCTAssertEqual(total.value, count * 4)
  }

  func testSchedulerAwaitOutsideCoroutineThrows() {
    XCTAssertThrowsError(try DispatchQueue.global().await { 1 }) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
  }
}
