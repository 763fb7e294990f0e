import Covenant
import CovenantCore
import Dispatch
import Foundation
import XCTest

final class CoScopeTests: XCTestCase {
  func testShortLivedChildScopesLeaveNoEntriesBehind() throws {
    // A parent that outlives many short-lived child scopes (one per request, say) keeps no
    // entry for each of them; the live ones are kept, and joined.
    let parent = CoScope()
    for _ in 0..<TestScale.stress(100_000) { parent.add(CoScope()) }
    XCTAssertLessThanOrEqual(parent.childEntryCount, 16)
    let live = (0..<100).map { _ in CoScope() }
    for child in live { parent.add(child) }
    for _ in 0..<10_000 { parent.add(CoScope()) }
    XCTAssertGreaterThanOrEqual(parent.childEntryCount, 100)
    XCTAssertLessThanOrEqual(parent.childEntryCount, 200 + 16)
    // A live child is still joined.
    let release = CoPromise<Void>()
    let finished = HitCounter()
    DispatchQueue.global().startCoroutine(in: live[50]) {
      try release.await()
      finished.increment()
    }
    DispatchQueue.global().async { release.success() }  // while `join` waits, or before
    try parent.join()
    XCTAssertEqual(finished.value, 1)
    // A scope that goes cancels its coroutines, and -O may end `live`'s lifetime at its last
    // use (the start): the coroutine would be cancelled, and the join would not wait.
    withExtendedLifetime(live) {}
  }

  func testCancelCancelsCoroutinesWhosePendingAwaitThrows() {
    let scope = CoScope()
    let outcomes = Recorder<String>()
    let group = DispatchGroup()
    let queue = DispatchQueue(label: "awaiting")
    for _ in 0..<5 {
      group.enter()
      queue.startCoroutine(in: scope) {
        defer { group.leave() }
        do { _ = try CoPromise<Int>().await() } catch { outcomes.append("\(error)") }
        XCTAssertTrue(Coroutine.isCanceled)
        XCTAssertThrowsError(try Coroutine.delay(.milliseconds(1)), "later awaits throw at once")
      }
    }
    XCTAssertFalse(scope.isEmpty)
    queue.sync {}  // every coroutine waits in its await
    scope.cancel()
    XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(outcomes.elements, Array(repeating: "\(CoroutineError.canceled)", count: 5))
    XCTAssertTrue(scope.isCanceled)
  }

  func testCancelCancelsFuturesAndChannels() {
    let scope = CoScope()
    let promise = CoPromise<Int>()
    scope.add(promise)
    let mapped = CoPromise<Int>().map { $0 }.added(to: scope)
    let channel = CoChannel<Int>(capacity: 1).added(to: scope)
    let sender = CoChannel<Int>().sender.added(to: scope)
    let task = CoFuture<Int> { try CoPromise<Int>().await() }.added(to: scope)
    scope.cancel()
    XCTAssertTrue(promise.isCanceled)
    XCTAssertTrue(mapped.isCanceled)
    XCTAssertTrue(channel.isCanceled)
    XCTAssertTrue(sender.isCanceled)
    XCTAssertTrue(task.isCanceled)
  }

  func testOwnerDeinitCancelsItsWork() {
    final class Owner: @unchecked Sendable {
      let scope = CoScope()
      let outcome = Box<String>("")
      func start(_ started: DispatchSemaphore, _ done: DispatchSemaphore) {
        let outcome = self.outcome
        DispatchQueue.global().startCoroutine(in: scope) {
          started.signal()
          do { _ = try CoPromise<Int>().await() } catch { outcome.value = "\(error)" }
          done.signal()
        }
      }
    }
    let started = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    var owner: Owner? = Owner()
    let outcome = owner!.outcome
    let channel = CoChannel<Int>().added(to: owner!.scope)
    owner!.start(started, done)
    // Running (a coroutine whose scope goes before it starts never runs its body at all).
    XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
    weak var weakScope: CoScope?
    weakScope = owner!.scope
    owner = nil
    XCTAssertNil(weakScope)
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(outcome.value, "\(CoroutineError.canceled)")
    XCTAssertTrue(channel.isCanceled)
  }

  func testItemsAreHeldWeaklyAndDroppedWhenComplete() {
    let scope = CoScope()
    weak var weakPromise: CoPromise<Int>?
    weak var weakChannel: CoChannel<Int>?
    do {
      let promise = CoPromise<Int>().added(to: scope)
      let channel = CoChannel<Int>().added(to: scope)
      weakPromise = promise
      weakChannel = channel
      XCTAssertFalse(scope.isEmpty)
      promise.success(1)
      channel.close()
    }
    XCTAssertNil(weakPromise, "the scope does not keep its items alive")
    XCTAssertNil(weakChannel)
    XCTAssertTrue(scope.isEmpty)

    let kept = CoPromise<Int>().added(to: scope)
    XCTAssertFalse(scope.isEmpty)
    kept.success(2)
    XCTAssertTrue(scope.isEmpty, "completed items are dropped")
  }

  func testFinishedCoroutinesLeaveTheScopeAndNothingLeaks() {
    let scope = CoScope()
    let group = DispatchGroup()
    for _ in 0..<20 {
      group.enter()
      DispatchQueue.global().startCoroutine(in: scope) {
        try Coroutine.delay(.milliseconds(1))
        group.leave()
      }
    }
    XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
    waitUntil { scope.isEmpty }
    weak var weakScope: CoScope?
    do {
      let temporary = CoScope()
      weakScope = temporary
      CoPromise<Int>().added(to: temporary).success(1)
    }
    XCTAssertNil(weakScope)
  }

  func testNestedScopes() {
    let parent = CoScope()
    let child = CoScope().added(to: parent)
    let grandchild = CoScope().added(to: child)
    let promise = CoPromise<Int>().added(to: grandchild)
    let channel = CoChannel<Int>().added(to: child)
    XCTAssertFalse(child.isCanceled)
    parent.cancel()
    XCTAssertTrue(child.isCanceled)
    XCTAssertTrue(grandchild.isCanceled)
    XCTAssertTrue(promise.isCanceled)
    XCTAssertTrue(channel.isCanceled)

    // Cancelling a child leaves the parent alone.
    let otherParent = CoScope()
    let otherChild = CoScope().added(to: otherParent)
    otherChild.cancel()
    XCTAssertFalse(otherParent.isCanceled)
    XCTAssertTrue(otherParent.isEmpty, "the cancelled child completed and left")
  }

  func testAddAfterCancelCancelsAtOnce() throws {
    let scope = CoScope()
    scope.cancel()
    let promise = CoPromise<Int>()
    scope.add(promise)
    XCTAssertTrue(promise.isCanceled, "before add returned")
    let channel = CoChannel<Int>().added(to: scope)
    XCTAssertTrue(channel.isCanceled)
    let ran = Box(false)
    DispatchQueue.global().startCoroutine(in: scope) { ran.value = true }
    try scope.join()  // it has ended, without running its body (cancelled before it started)
    XCTAssertFalse(ran.value)
    XCTAssertTrue(scope.isEmpty)
  }

  func testWhenCompleteRunsOnceOnCancelNotWhenEmpty() {
    let scope = CoScope()
    let log = Recorder<String>()
    scope.whenComplete { log.append("complete") }
    CoPromise<Int>().added(to: scope).success(1)
    XCTAssertTrue(scope.isEmpty)
    XCTAssertEqual(log.elements, [], "merely empty is not complete")
    scope.cancel()
    scope.cancel()
    XCTAssertEqual(log.elements, ["complete"])
    scope.whenComplete { log.append("late") }
    XCTAssertEqual(log.elements, ["complete", "late"])
  }

  func testDeinitRunsWhenComplete() {
    let log = Recorder<String>()
    do {
      let scope = CoScope()
      scope.whenComplete { log.append("complete") }
    }
    XCTAssertEqual(log.elements, ["complete"])
  }

  func testConcurrentAddAndCancel() {
    for _ in 0..<50 {
      let scope = CoScope()
      let promises = (0..<200).map { _ in CoPromise<Int>() }
      DispatchQueue.concurrentPerform(iterations: 4) { part in
        if part == 3 {
          scope.cancel()
        } else {
          for index in stride(from: part, to: promises.count, by: 3) { scope.add(promises[index]) }
        }
      }
      XCTAssertTrue(promises.allSatisfy(\.isCanceled), "every item added before or after cancel")
    }
  }
}
