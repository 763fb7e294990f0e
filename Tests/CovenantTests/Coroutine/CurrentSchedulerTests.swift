import Covenant
import CovenantTesting
import Foundation
import XCTest

/// A value-type scheduler (no identity), running tasks on a global queue.
private struct GlobalQueueScheduler: CoroutineScheduler {
  let marker: Int
  func scheduleTask(_ task: @escaping () -> Void) {
    let task = UnsafeTransfer(task)
    DispatchQueue.global().async { task.value() }
  }
}

/// `Coroutine.currentScheduler` on every kind of scheduler.
final class CurrentSchedulerTests: XCTestCase {
  /// The current scheduler seen by a coroutine on `scheduler`, before and after a suspension.
  private func seen(
    on scheduler: some CoroutineScheduler
  ) throws -> [(any CoroutineScheduler)?] {
    try wait(
      for: scheduler.coroutineFuture { () -> [UnsafeTransfer<(any CoroutineScheduler)?>] in
        let before = Coroutine.currentScheduler
        try Coroutine.yield()
        let promise = CoPromise<Void>()
        DispatchQueue.global().async { promise.success() }
        try promise.await()  // resumed from another thread
        return [UnsafeTransfer(before), UnsafeTransfer(Coroutine.currentScheduler)]
      }
    ).map(\.value)
  }

  private func assertSeesItself(
    _ scheduler: some CoroutineScheduler & AnyObject, file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    for current in try seen(on: scheduler) {
      XCTAssertTrue(current.map { $0 as AnyObject } === scheduler, file: file, line: line)
    }
  }

  func testNilOutsideACoroutine() {
    XCTAssertNil(Coroutine.currentScheduler)
  }

  func testSerialDispatchQueue() throws {
    try assertSeesItself(DispatchQueue(label: "serial"))
  }

  func testConcurrentDispatchQueue() throws {
    try assertSeesItself(DispatchQueue(label: "concurrent", attributes: .concurrent))
  }

  func testGlobalDispatchQueue() throws {
    try assertSeesItself(DispatchQueue.global(qos: .utility))
  }

  func testMainDispatchQueue() throws {
    // `wait(for:)` runs the main run loop, which drains the main queue.
    try assertSeesItself(DispatchQueue.main)
  }

  func testCustomClassScheduler() throws {
    try assertSeesItself(PerformingContext())
  }

  func testValueTypeScheduler() throws {
    for current in try seen(on: GlobalQueueScheduler(marker: 7)) {
      XCTAssertEqual((current as? GlobalQueueScheduler)?.marker, 7)
    }
  }

  func testTestScheduler() throws {
    let scheduler = TestScheduler()
    let seen = Locked<[ObjectIdentifier?]>([])
    scheduler.startCoroutine {
      seen.withLock {
        $0.append(Coroutine.currentScheduler.map { ObjectIdentifier($0 as AnyObject) })
      }
      try Coroutine.delay(.seconds(1))
      seen.withLock {
        $0.append(Coroutine.currentScheduler.map { ObjectIdentifier($0 as AnyObject) })
      }
    }
    scheduler.run()
    scheduler.advance(by: .seconds(1))
    XCTAssertEqual(
      seen.withLock { $0 }, [ObjectIdentifier(scheduler), ObjectIdentifier(scheduler)])
  }

  func testOperationQueue() throws {
    try assertSeesItself(OperationQueue())
  }

  func testRunLoop() throws {
    let thread = RunLoopThread.started()
    defer { thread.stop() }
    try assertSeesItself(thread.runLoop)
  }

  /// `Coroutine.start` and `CoFuture(task:)` run on the immediate scheduler (not public): it is
  /// reported, and runs a task at once on the calling thread.
  func testImmediateSchedulerOfCoroutineStartAndFutureTask() throws {
    let fromStart = Locked<(any CoroutineScheduler)?>(nil)
    Coroutine.start { fromStart.withLock { $0 = Coroutine.currentScheduler } }
    let immediate = try XCTUnwrap(fromStart.withLock { $0 })
    XCTAssertFalse(immediate is DispatchQueue)
    var ranAtOnce = false
    immediate.scheduleTask { ranAtOnce = true }
    XCTAssertTrue(ranAtOnce)
    let immediateType = ObjectIdentifier(type(of: immediate))
    let fromTask = CoFuture { Coroutine.currentScheduler.map { ObjectIdentifier(type(of: $0)) } }
    XCTAssertEqual(try fromTask.result?.get(), immediateType)
  }

  func testFollowsAHopAndComesBack() throws {
    let home = DispatchQueue(label: "home")
    let away = DispatchQueue(label: "away")
    let seen = try wait(
      for: home.coroutineFuture { () -> [Bool] in
        let inside = try away.await { Coroutine.currentScheduler as? DispatchQueue === away }
        return [inside, Coroutine.currentScheduler as? DispatchQueue === home]
      })
    XCTAssertEqual(seen, [true, true])
  }

  func testNilInsideALazyGeneratorBody() throws {
    let insideCoroutine = try wait(
      for: DispatchQueue.global().coroutineFuture { () -> [Bool] in
        let gen = Generator<Bool> { yield in try yield(Coroutine.currentScheduler == nil) }
        return [gen.next()!, Coroutine.currentScheduler != nil]
      })
    XCTAssertEqual(insideCoroutine, [true, true])
  }

  func testNestedCoroutinesEachSeeTheirOwn() throws {
    let outer = DispatchQueue(label: "outer")
    let inner = DispatchQueue(label: "inner")
    let seen = try wait(
      for: outer.coroutineFuture { () -> [Bool] in
        let nested = try inner.coroutineFuture {
          Coroutine.currentScheduler as? DispatchQueue === inner
        }.await()
        return [nested, Coroutine.currentScheduler as? DispatchQueue === outer]
      })
    XCTAssertEqual(seen, [true, true])
  }
}
