import Covenant
import CovenantTesting
import Foundation
import XCTest

private struct BridgeError: Error, Equatable {}

private func work(_ value: Int) async -> Int {
  try? await Task.sleep(nanoseconds: 1_000_000)
  return value * 2
}

private func failingWork() async throws -> Int {
  throw BridgeError()
}

final class ConcurrencyCoroutineTests: XCTestCase {
  func testAwaitAsyncReturnsResultOnTheCoroutinesScheduler() throws {
    let (queue, key) = DispatchQueue.tagged("awaitAsync")
    let result = Box<(Int, String?)?>(nil)
    let done = expectation(description: "done")
    queue.startCoroutine {
      let value = try Coroutine.awaitAsync { await work(21) }
      result.value = (value, DispatchQueue.getSpecific(key: key))
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(result.value?.0, 42)
    XCTAssertEqual(result.value?.1, "awaitAsync", "continues on its own scheduler")
  }

  func testAwaitAsyncRethrows() throws {
    let caught = Box<(any Error)?>(nil)
    let done = expectation(description: "done")
    DispatchQueue.global().startCoroutine {
      do { _ = try Coroutine.awaitAsync { try await failingWork() } } catch { caught.value = error }
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(caught.value as? BridgeError, BridgeError())
  }

  func testAwaitSpellingWithAsyncClosure() throws {
    let result = Box<Int?>(nil)
    let done = expectation(description: "done")
    DispatchQueue.global().startCoroutine {
      result.value = try Coroutine.await { await work(5) }
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(result.value, 10)
  }

  func testCallbackFormWithTask() throws {
    // InteropWithAsyncAwait: the plain callback `await` around a `Task` must work.
    let result = Box<Int?>(nil)
    let done = expectation(description: "done")
    DispatchQueue.global().startCoroutine {
      result.value = try Coroutine.await { (cb: @escaping @Sendable (Int) -> Void) in
        Task { cb(await work(4)) }
      }
      done.fulfill()
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(result.value, 8)
  }

  func testAwaitAsyncOutsideCoroutineThrows() {
    XCTAssertThrowsError(try Coroutine.awaitAsync { await work(1) }) { error in
      XCTAssertEqual(error as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  func testCancellingTheCoroutineCancelsTheTask() throws {
    let scope = CoScope()
    let taskSawCancellation = expectation(description: "task cancelled")
    let coroutineError = Box<(any Error)?>(nil)
    let done = expectation(description: "coroutine ended")
    let waiting = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine(in: scope) {
      do {
        _ = try Coroutine.awaitAsync { () async throws -> Int in
          waiting.signal()
          do {
            try await Task.sleep(nanoseconds: 10_000_000_000)
          } catch is CancellationError {
            taskSawCancellation.fulfill()
          }
          return 0
        }
      } catch {
        coroutineError.value = error
      }
      done.fulfill()
    }
    waiting.wait()
    scope.cancel()
    wait(for: [done, taskSawCancellation], timeout: 5)
    XCTAssertEqual(coroutineError.value as? CoroutineError, .canceled)
  }

  func testPromiseGetFromTaskInsideCoroutineWorld() throws {
    // Round trip: a coroutine awaits a task that awaits a promise a coroutine fulfils.
    let promise = Promise<Int>.pending()
    DispatchQueue.global().startCoroutine {
      try Coroutine.delay(.milliseconds(5))
      promise.fulfill(9)
    }
    let value = try runCoroutine(on: DispatchQueue.global()) {
      try Coroutine.awaitAsync { try await promise.get() }
    }
    XCTAssertEqual(value, 9)
  }
}
