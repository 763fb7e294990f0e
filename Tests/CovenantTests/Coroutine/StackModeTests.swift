import CCoroutineContext
import Covenant
import CovenantTesting
import Foundation
import XCTest

/// The stack mode of a coroutine: its start's choice, else its scheduler's, else the default
/// (the Coroutines article, "Stacks").
final class StackModeTests: XCTestCase {
  /// The stack mode the coroutine started by `start` runs with.
  private func observedMode(
    _ start: (@escaping @Sendable () throws -> Void) -> Void
  ) -> CoroutineStackMode? {
    let mode = Box<CoroutineStackMode?>(nil)
    let done = DispatchSemaphore(value: 0)
    start {
      if let fiber = Coroutine.currentFiber {
        mode.value = cov_fiber_is_shared(fiber) != 0 ? .shared : .dedicated
      }
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    return mode.value
  }

  func testSharedIsTheDefault() {
    XCTAssertEqual(Coroutine.defaultStackMode, .shared)
    let queue = DispatchQueue(label: "modes.default")
    XCTAssertEqual(observedMode { queue.startCoroutine(task: $0) }, .shared)
    XCTAssertEqual(observedMode { body in _ = queue.coroutineFuture { try body() } }, .shared)
    XCTAssertEqual(observedMode { body in Coroutine.start { try body() } }, .shared)
    XCTAssertEqual(observedMode { body in _ = CoFuture { try body() } }, .shared)
  }

  func testPerStartMode() {
    let queue = DispatchQueue(label: "modes.start")
    XCTAssertEqual(observedMode { queue.startCoroutine(stackMode: .dedicated, $0) }, .dedicated)
    XCTAssertEqual(observedMode { queue.startCoroutine(stackMode: .shared, $0) }, .shared)
    XCTAssertEqual(
      observedMode { body in _ = queue.coroutineFuture(stackMode: .dedicated) { try body() } },
      .dedicated)
    // A stack size asks for a stack of that size: a dedicated one.
    XCTAssertEqual(observedMode { queue.startCoroutine(stackSize: 65_536, $0) }, .dedicated)
    XCTAssertEqual(observedMode { queue.startCoroutine(stackSize: nil, $0) }, .shared)
  }

  func testPerSchedulerMode() {
    let queue = DispatchQueue(label: "modes.scheduler")
    XCTAssertNil(queue.coroutineStackMode)
    queue.coroutineStackMode = .dedicated
    XCTAssertEqual(queue.coroutineStackMode, .dedicated)
    XCTAssertEqual(observedMode { queue.startCoroutine(task: $0) }, .dedicated)
    // Another scheduler is not affected; the start's own choice wins over the scheduler's.
    XCTAssertEqual(observedMode { DispatchQueue(label: "other").startCoroutine(task: $0) }, .shared)
    XCTAssertEqual(observedMode { queue.startCoroutine(stackMode: .shared, $0) }, .shared)
    queue.coroutineStackMode = nil
    XCTAssertEqual(observedMode { queue.startCoroutine(task: $0) }, .shared)
  }

  func testPerSchedulerModeEndsWithItsScheduler() {
    // The setting is keyed by identity but checked against a weak reference: a new queue that
    // happens to get the same address starts without it.
    for _ in 0..<20 {
      let queue = DispatchQueue(label: "modes.transient")
      queue.coroutineStackMode = .dedicated
    }
    let fresh = DispatchQueue(label: "modes.fresh")
    XCTAssertNil(fresh.coroutineStackMode)
    XCTAssertEqual(observedMode { fresh.startCoroutine(task: $0) }, .shared)
  }

  func testGlobalDefault() {
    Coroutine.defaultStackMode = .dedicated
    defer { Coroutine.defaultStackMode = .shared }
    let queue = DispatchQueue(label: "modes.global")
    XCTAssertEqual(observedMode { queue.startCoroutine(task: $0) }, .dedicated)
    XCTAssertEqual(observedMode { queue.startCoroutine(stackMode: .shared, $0) }, .shared)
  }

  func testSharedStackCountPerScheduler() {
    let queue = DispatchQueue(label: "modes.count")
    XCTAssertEqual(queue.coroutineSharedStackCount, Coroutine.sharedStacksPerScheduler)
    queue.coroutineSharedStackCount = 3
    XCTAssertEqual(queue.coroutineSharedStackCount, 3)
    queue.coroutineSharedStackCount = 1_000
    XCTAssertEqual(queue.coroutineSharedStackCount, 64)
    queue.coroutineSharedStackCount = 0
    XCTAssertEqual(queue.coroutineSharedStackCount, 1)
    // Five coroutines suspended at once on a serial queue with three stacks: three stacks (one
    // with eager eviction, as in debug builds: every suspension leaves its stack empty).
    queue.coroutineSharedStackCount = 3
    let promises = (0..<5).map { _ in Promise<Int>() }
    let stacks = Box<Set<UnsafeRawPointer>>([])
    for promise in promises {
      queue.startCoroutine {
        if let stack = runningStack() { stacks.value.insert(stack) }
        _ = try promise.await()
      }
    }
    queue.sync {}
    let expected = cov_shared_stacks_eager_eviction() != 0 ? 1 : 3
    XCTAssertEqual(stacks.value.count, expected)
    for promise in promises { promise.fulfill(0) }
  }

  func testCopyLimitSetting() {
    let original = Coroutine.sharedStackCopyLimit
    defer { Coroutine.sharedStackCopyLimit = original }
    XCTAssertEqual(original, 65_536)
    Coroutine.sharedStackCopyLimit = 100
    XCTAssertEqual(Coroutine.sharedStackCopyLimit, 4_096)
    Coroutine.sharedStackCopyLimit = 200_000
    XCTAssertEqual(Coroutine.sharedStackCopyLimit, 200_000)
  }

  func testGeneratorsHaveDedicatedStacks() {
    // A generator is resumed synchronously by whoever calls next(): it could not wait for a
    // shared stack, so it never uses one, also when consumed inside a shared-stack coroutine.
    @Sendable func makeGenerator() -> Generator<Int32> {
      Generator { yield in try yield(cov_fiber_is_shared(cov_fiber_current())) }
    }
    XCTAssertEqual(makeGenerator().next(), 0)
    let inside = Box<[Int32]>([])
    let done = DispatchSemaphore(value: 0)
    DispatchQueue(label: "modes.generator").startCoroutine {
      inside.value = [cov_fiber_is_shared(cov_fiber_current()), makeGenerator().next() ?? -1]
      done.signal()
    }
    done.wait()
    XCTAssertEqual(inside.value, [1, 0])
  }

  func testActorsFollowTheirSchedulersMode() throws {
    let queue = DispatchQueue(label: "modes.actor")
    queue.coroutineStackMode = .dedicated
    let reply = CoPromise<Int32>()
    let mailbox = queue.actor(of: Int.self) { receiver in
      for _ in receiver.makeIterator() {
        reply.success(cov_fiber_is_shared(cov_fiber_current()))
      }
    }
    mailbox.offer(1)
    XCTAssertEqual(try wait(for: reply, timeout: 10), 0)
    mailbox.close()
  }
}
