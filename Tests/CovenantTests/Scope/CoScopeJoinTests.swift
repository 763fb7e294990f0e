import Covenant
import Dispatch
import XCTest

/// `CoScope.join()` / `cancelAndJoin()` and `CoFuture.join()`: waiting until coroutine bodies
/// have really ended.
final class CoScopeJoinTests: XCTestCase {
  func testJoinOutsideACoroutineBlocksUntilEveryCoroutineHasEnded() {
    let scope = CoScope()
    let gates = (0..<3).map { _ in CoPromise<Int>() }
    let ended = Locked(0)
    for gate in gates {
      DispatchQueue.global().startCoroutine(in: scope) {
        defer { ended.withLock { $0 += 1 } }
        _ = try gate.await()
      }
    }
    let joined = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      try? scope.join()
      joined.signal()
    }
    XCTAssertEqual(joined.wait(timeout: .now() + 0.05), .timedOut, "the coroutines still wait")
    for (index, gate) in gates.enumerated() { gate.success(index) }
    XCTAssertEqual(joined.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(ended.withLock { $0 }, 3, "join returned after every body ended")
  }

  func testCancelAndJoinWaitsForBodiesToUnwind() throws {
    // Cancelling fails the await at once, but each body still runs its clean-up: join waits
    // for that too.
    let scope = CoScope()
    let cleanedUp = Locked(0)
    let started = DispatchGroup()
    for _ in 0..<4 {
      started.enter()
      DispatchQueue.global().startCoroutine(in: scope) {
        started.leave()
        do {
          _ = try CoPromise<Int>().await()
        } catch {
          usleep(2_000)  // clean-up that takes a while, after the cancel
          cleanedUp.withLock { $0 += 1 }
          throw error
        }
      }
    }
    XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
    try scope.cancelAndJoin()
    XCTAssertEqual(cleanedUp.withLock { $0 }, 4)
    try scope.join()  // joining again returns at once
  }

  func testJoinInsideACoroutineSuspendsInsteadOfBlocking() {
    // One serial queue runs both the joiner and the joined coroutine: a blocking join would
    // deadlock; a suspending one lets the other run.
    let queue = DispatchQueue(label: "join.serial")
    let scope = CoScope()
    let gate = CoPromise<Void>()
    let order = Locked([String]())
    queue.startCoroutine(in: scope) {
      try gate.await()
      order.withLock { $0.append("worker ended") }
    }
    coRun(on: queue) {
      queue.async { gate.success(()) }
      try scope.join()
      order.withLock { $0.append("joined") }
    }
    XCTAssertEqual(order.withLock { $0 }, ["worker ended", "joined"])
  }

  func testJoinOfAnEmptyScopeReturnsAtOnce() throws {
    let scope = CoScope()
    try scope.join()
    scope.cancel()
    try scope.cancelAndJoin()
  }

  func testJoinWaitsForChildScopesAndCoroutineFutures() throws {
    let parent = CoScope()
    let child = CoScope().added(to: parent)
    let ended = Locked([String]())
    let gate = CoPromise<Void>()
    DispatchQueue.global().startCoroutine(in: child) {
      defer { ended.withLock { $0.append("child's coroutine") } }
      try gate.await()
    }
    let future = DispatchQueue.global().coroutineFuture { () -> Int in
      defer { ended.withLock { $0.append("future's body") } }
      try gate.await()
      return 1
    }.added(to: parent)
    let joined = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      try? parent.join()
      joined.signal()
    }
    XCTAssertEqual(joined.wait(timeout: .now() + 0.05), .timedOut)
    gate.success(())
    XCTAssertEqual(joined.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(Set(ended.withLock { $0 }), ["child's coroutine", "future's body"])
    XCTAssertEqual(future.result.map { try? $0.get() }, 1)
  }

  func testCancelAndJoinReachesCancelledChildScopes() throws {
    let parent = CoScope()
    let child = CoScope().added(to: parent)
    let cleanedUp = Locked(false)
    let started = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine(in: child) {
      started.signal()
      do { try CoPromise<Void>().await() } catch {
        usleep(2_000)
        cleanedUp.withLock { $0 = true }
      }
    }
    XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
    try parent.cancelAndJoin()
    XCTAssertTrue(child.isCanceled)
    XCTAssertTrue(cleanedUp.withLock { $0 }, "the child's coroutine ended before join returned")
  }

  func testCancelAndJoinFromOneOfTheScopesCoroutinesThrowsCanceled() {
    let scope = CoScope()
    let outcome = Box("")
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().startCoroutine(in: scope) {
      defer { done.signal() }
      do {
        try scope.cancelAndJoin()
        outcome.value = "returned"
      } catch { outcome.value = "\(error)" }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
  }

  func testAJoiningCoroutineThatIsCancelledStopsWaiting() {
    let busy = CoScope()
    DispatchQueue.global().startCoroutine(in: busy) { try CoPromise<Void>().await() }
    let joinerScope = CoScope()
    let outcome = Box("")
    let done = DispatchSemaphore(value: 0)
    let queue = DispatchQueue(label: "joiner")
    queue.startCoroutine(in: joinerScope) {
      defer { done.signal() }
      do {
        try busy.join()
        outcome.value = "joined"
      } catch { outcome.value = "\(error)" }
    }
    queue.sync {}
    joinerScope.cancel()
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
    busy.cancel()
    XCTAssertNoThrow(try busy.join())
  }

  // MARK: CoFuture.join

  func testFutureJoinWaitsForTheBodyAfterACancel() throws {
    let cleanedUp = Locked(false)
    let started = DispatchSemaphore(value: 0)
    let future = DispatchQueue.global().coroutineFuture { () -> Int in
      started.signal()
      do {
        try CoPromise<Void>().await()
      } catch {
        usleep(2_000)
        cleanedUp.withLock { $0 = true }
        throw error
      }
      return 0
    }
    XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
    future.cancel()
    XCTAssertTrue(future.isCanceled, "the future fails at once")
    try future.join()
    XCTAssertTrue(cleanedUp.withLock { $0 }, "join waited for the body")
  }

  func testFutureJoinOfOtherFuturesWaitsForCompletion() throws {
    let promise = CoPromise<Int>()
    DispatchQueue.global().async { promise.success(3) }  // while `join` waits, or before
    try promise.join()
    XCTAssertEqual(promise.result.map { try? $0.get() }, 3)
    let failed = CoFuture<Int>(result: .failure(TestError(1)))
    XCTAssertNoThrow(try failed.join(), "join does not throw the future's own error")
  }

  func testFutureJoinInsideACoroutine() {
    let gate = CoPromise<Void>()
    let future = DispatchQueue.global().coroutineFuture { () -> String in
      try gate.await()
      return "done"
    }
    coRun {
      DispatchQueue.global().async { gate.success(()) }
      try future.join()
      XCTAssertEqual(try future.await(), "done")
    }
  }
}
