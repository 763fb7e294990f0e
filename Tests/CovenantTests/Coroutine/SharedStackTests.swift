import CCoroutineContext
import Covenant
import CovenantTesting
import Foundation
import XCTest

/// Copy-on-suspend stacks (Architecture.md, "Stacks"; the Coroutines article, "Stacks"): a
/// suspended coroutine's frames are copied out only when another coroutine needs its stack, and
/// back to the same addresses before it continues; a coroutine whose stack is running elsewhere
/// waits without blocking anything.
final class SharedStackTests: XCTestCase {
  /// One shared stack for the queue's coroutines: each one that starts takes the stack over.
  private func oneStackQueue(_ label: String, concurrent: Bool = false) -> DispatchQueue {
    let queue = DispatchQueue(label: label, attributes: concurrent ? .concurrent : [])
    queue.coroutineSharedStackCount = 1
    return queue
  }

  func testFramesAndPointersIntoThemSurviveEviction() throws {
    let queue = oneStackQueue("shared.frames")
    let count = 50
    let promises = (0..<count).map { _ in Promise<Int>() }
    let fibers = Box<[OpaquePointer?]>(Array(repeating: nil, count: count))
    let intact = HitCounter()
    let done = expectation(description: "all resumed")
    done.expectedFulfillmentCount = count
    for (i, promise) in promises.enumerated() {
      queue.startCoroutine {
        fibers.value[i] = Coroutine.currentFiber
        var frame = (i, i &* 7, i &* 31, Array(repeating: UInt8(truncatingIfNeeded: i), count: 64))
        try withUnsafeMutablePointer(to: &frame) { pointer in
          let value = try promise.await()
          // The same addresses, the same bytes: the pointer is valid for the coroutine itself.
          if pointer.pointee.0 == i, pointer.pointee.1 == i &* 7, pointer.pointee.2 == i &* 31,
            pointer.pointee.3.allSatisfy({ $0 == UInt8(truncatingIfNeeded: i) }), value == i
          {
            intact.increment()
          }
        }
        done.fulfill()
      }
    }
    queue.sync {}
    // Every coroutine but the last to start was copied out for the next one: they all ran on
    // one stack (the group may hold more, left by a scheduler that had this address before).
    let copiedOut = fibers.value.dropLast().filter { $0.map(isCopiedOut) ?? false }.count
    XCTAssertEqual(copiedOut, count - 1)
    let stacks = Set(fibers.value.compactMap { $0.flatMap(suspendedFrames)?.stack_low })
    XCTAssertEqual(stacks.count, 1)
    for (i, promise) in promises.enumerated().reversed() { promise.fulfill(i) }
    wait(for: [done], timeout: 10)
    XCTAssertEqual(intact.value, count)
  }

  func testHandOffsOnSeparateStacksCopyNothing() throws {
    try XCTSkipIf(cov_shared_stacks_eager_eviction() != 0, "debug builds copy at every suspension")
    // Two coroutines taking turns on a serial queue get a stack each (the default is four per
    // scheduler), so a turn finds the frames in place.
    let queue = DispatchQueue(label: "shared.lazy")
    let ping = CoChannel<Int>(bufferType: .buffered(capacity: 1))
    let pong = CoChannel<Int>(bufferType: .buffered(capacity: 1))
    let fibers = Box<[OpaquePointer]>([])
    let everInPlace = Box(true)
    let done = expectation(description: "done")
    done.expectedFulfillmentCount = 2
    queue.startCoroutine {
      fibers.value.append(Coroutine.currentFiber!)
      for i in 0..<200 {
        try ping.awaitSend(i)
        _ = try pong.awaitReceive()
        if fibers.value.contains(where: isCopiedOut) { everInPlace.value = false }
      }
      done.fulfill()
    }
    queue.startCoroutine {
      fibers.value.append(Coroutine.currentFiber!)
      for _ in 0..<200 { try pong.awaitSend(try ping.awaitReceive()) }
      done.fulfill()
    }
    wait(for: [done], timeout: 10)
    XCTAssertTrue(everInPlace.value)
    XCTAssertEqual(fibers.value.map { cov_fiber_is_shared($0) }, [1, 1])
  }

  func testACoroutineWhoseStackRunsElsewhereWaitsWithoutBlockingOthers() throws {
    let queue = oneStackQueue("shared.parking", concurrent: true)
    let events = EventLog()
    // B is suspended on the queue's one stack; A then takes that stack over and blocks its
    // thread (what a coroutine should not do) until released.
    let promiseB = Promise<Int>()
    let fiberB = Box<OpaquePointer?>(nil)
    let bDone = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      fiberB.value = Coroutine.currentFiber
      _ = try promiseB.await()
      events.add("B resumes")
      bDone.signal()
    }
    waitUntilSuspended(fiberB)
    let stackB = fiberB.value.flatMap(suspendedFrames)?.stack_low
    let stacksOfAC = Box<[UnsafeRawPointer?]>([])
    let gate = DispatchSemaphore(value: 0)
    let aRunning = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      stacksOfAC.value.append(runningStack())
      events.add("A blocks")
      aRunning.signal()
      gate.wait()
      events.add("A released")
    }
    aRunning.wait()
    // B is woken while its stack runs A on another thread: it waits for the stack...
    promiseB.fulfill(1)
    // ...and nothing else does: another coroutine of the queue runs meanwhile (on a new stack:
    // the group grows while all of its stacks are running).
    let cDone = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      stacksOfAC.value.append(runningStack())
      events.add("C runs")
      cDone.signal()
    }
    XCTAssertEqual(cDone.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(bDone.wait(timeout: .now() + 0.1), .timedOut, "B ran while its stack was busy")
    gate.signal()
    XCTAssertEqual(bDone.wait(timeout: .now() + 10), .success)
    let log = events.entries
    XCTAssertLessThan(log.firstIndex(of: "C runs")!, log.firstIndex(of: "A released")!)
    XCTAssertLessThan(log.firstIndex(of: "A released")!, log.firstIndex(of: "B resumes")!)
    // A took B's stack over; C ran on another.
    XCTAssertNotNil(stackB)
    XCTAssertEqual(stacksOfAC.value.first, stackB)
    XCTAssertNotEqual(stacksOfAC.value.last, stackB)
  }

  func testExclusiveAccessHeldAcrossAnEvictionAndAThreadChange() {
    // The inout accesses of CoroutineExclusivityTests, with the coroutines' frames copied out
    // while they wait (one stack for all) and resumed on other threads.
    assertInoutAccessesHeldAcrossSuspensions(
      on: oneStackQueue("shared.exclusivity", concurrent: true))
  }

  func testSchedulersBeyondTheGroupTableStillGetStacksOfTheirOwn() throws {
    // At most 768 schedulers have a group of stacks at a time; idle groups move to new ones.
    for i in 0..<1_000 {
      let queue = DispatchQueue(label: "shared.many.\(i)")
      XCTAssertEqual(try wait(for: queue.coroutineFuture { i }), i)
    }
    let last = DispatchQueue(label: "shared.many.last")
    last.coroutineSharedStackCount = 2
    let promises = [Promise<Int>(), Promise<Int>()]
    for promise in promises { last.startCoroutine { _ = try promise.await() } }
    last.sync {}
    // Its key has a group in the table (a key left to share one would find none); that group
    // may have stacks from the scheduler it served before.
    XCTAssertGreaterThan(cov_stack_group_stack_count(groupKey(last)), 0)
    for promise in promises { promise.fulfill(0) }
  }

  func testManyCoroutinesAcrossThreadsOnTwoStacks() {
    // Contention: a concurrent queue, two stacks at first, coroutines that suspend and resume
    // from timers on other threads, each checking its own frames after every resume.
    let queue = DispatchQueue(label: "shared.stress", attributes: .concurrent)
    queue.coroutineSharedStackCount = 2
    let count = TestScale.stress(400, sanitizerDivisor: 4)
    let corrupted = HitCounter()
    let done = expectation(description: "done")
    done.expectedFulfillmentCount = count
    for i in 0..<count {
      queue.startCoroutine {
        var local = (i, i &+ 1, i &+ 2)
        for round in 0..<5 {
          let value = try Promise<Int>(on: .global()) { round }.await()
          if local != (i &+ round, i &+ round &+ 1, i &+ round &+ 2) || value != round {
            corrupted.increment()
          }
          local = (local.0 &+ 1, local.1 &+ 1, local.2 &+ 1)
        }
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 60)
    XCTAssertEqual(corrupted.value, 0)
  }
}

/// Where a suspended coroutine's frames are (nil if it is not suspended), read under its shared
/// stack's lock: consistent while other threads run coroutines of that stack.
func suspendedFrames(_ fiber: OpaquePointer) -> cov_fiber_frames_t? {
  var frames = cov_fiber_frames_t()
  return cov_fiber_copy_frames(fiber, nil, 0, &frames) > 0 ? frames : nil
}

/// The lowest address of the stack the calling coroutine runs on.
func runningStack() -> UnsafeRawPointer? {
  var frames = cov_fiber_frames_t()
  guard let fiber = Coroutine.currentFiber else { return nil }
  cov_fiber_frames(fiber, &frames)  // of the caller's own fiber: no other thread touches it now
  return frames.stack_low
}

/// Waits until the coroutine whose fiber `box` receives has started and switched out.
func waitUntilSuspended(_ box: Box<OpaquePointer?>) {
  while box.value.flatMap(suspendedFrames) == nil { usleep(200) }
}

/// Whether a suspended coroutine's frames are copied out of its shared stack.
func isCopiedOut(_ fiber: OpaquePointer) -> Bool { suspendedFrames(fiber)?.copied_out == 1 }

/// The shared-stack group of a scheduler (its object identity).
func groupKey(_ scheduler: AnyObject) -> UnsafeRawPointer {
  UnsafeRawPointer(Unmanaged.passUnretained(scheduler).toOpaque())
}

/// An ordered, thread-safe list of event names.
final class EventLog: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [String] = []

  func add(_ event: String) {
    lock.lock()
    list.append(event)
    lock.unlock()
  }

  var entries: [String] {
    lock.lock()
    defer { lock.unlock() }
    return list
  }
}
