import CovenantNIO
import Dispatch
import NIOCore
import NIOPosix
import XCTest

/// The four conversions and `EventLoopFuture.await()`: values, errors, cancellation, and which
/// thread completes what.
final class EventLoopFutureBridgeTests: XCTestCase {
  var group: MultiThreadedEventLoopGroup!
  var loop: (any EventLoop)!

  override func setUp() {
    group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    loop = group.next()
  }

  override func tearDown() {
    try? group.syncShutdownGracefully()
  }

  func testPromiseFromEventLoopFutureSucceedsOnTheLoopThread() {
    let nioPromise = loop.makePromise(of: Int.self)
    let promise = Promise(nioPromise.futureResult)
    XCTAssertTrue(promise.isPending)
    let resolvedOnLoop = CoPromise<Bool>()
    let loop = self.loop!
    CoFuture(promise).whenComplete { _ in resolvedOnLoop.success(loop.inEventLoop) }
    nioPromise.succeed(7)
    XCTAssertEqual(value(of: CoFuture(promise)), 7)
    XCTAssertEqual(value(of: resolvedOnLoop), true)
  }

  func testPromiseFromEventLoopFuturePassesTheErrorThrough() {
    let promise = Promise(loop.makeFailedFuture(TestError()) as EventLoopFuture<Int>)
    XCTAssertThrowsError(try outcome(of: CoFuture(promise)).get()) {
      XCTAssertTrue($0 is TestError)
    }
  }

  func testCoFutureFromEventLoopFuture() {
    let nioPromise = loop.makePromise(of: String.self)
    let future = CoFuture(nioPromise.futureResult)
    XCTAssertNil(future.result)
    nioPromise.succeed("ok")
    XCTAssertEqual(value(of: future), "ok")

    let failing = CoFuture(loop.makeFailedFuture(TestError()) as EventLoopFuture<String>)
    XCTAssertThrowsError(try outcome(of: failing).get()) { XCTAssertTrue($0 is TestError) }
  }

  func testCancellingTheCoFutureLeavesTheEventLoopFutureAlone() {
    let nioPromise = loop.makePromise(of: Int.self)
    let future = CoFuture(nioPromise.futureResult)
    future.cancel()
    XCTAssertThrowsError(try outcome(of: future).get()) {
      XCTAssertEqual($0 as? CoFutureError, .canceled)
    }
    nioPromise.succeed(1)  // ignored by the cancelled future, and no leaked NIO promise
    XCTAssertEqual(try nioPromise.futureResult.wait(), 1)
    XCTAssertTrue(future.isCanceled)
  }

  func testPromiseToEventLoopFuture() throws {
    let promise = Promise<Int>.pending()
    let nioFuture = promise.eventLoopFuture(on: loop)
    XCTAssertTrue(nioFuture.eventLoop === loop)
    promise.fulfill(3)
    XCTAssertEqual(try nioFuture.wait(), 3)

    let rejected = Promise<Int>.pending()
    let failing = rejected.eventLoopFuture(on: loop)
    rejected.reject(TestError())
    XCTAssertThrowsError(try failing.wait()) { XCTAssertTrue($0 is TestError) }

    XCTAssertEqual(try Promise(5).eventLoopFuture(on: loop).wait(), 5)
  }

  func testAbandonedPromiseFailsTheEventLoopFuture() {
    var promise: Promise<Int>? = Promise<Int>.pending()
    let nioFuture = promise!.eventLoopFuture(on: loop)
    promise = nil
    // Covenant fails what observes a promise nobody can resolve with `CoFutureError.canceled`;
    // `promiseAbandoned` is the bridge's own guarantee should that observer be dropped instead.
    XCTAssertThrowsError(try nioFuture.wait()) {
      XCTAssertTrue(
        ($0 as? CoFutureError) == .canceled || ($0 as? CovenantNIOError) == .promiseAbandoned,
        "\($0)")
    }
  }

  func testCoFutureToEventLoopFuture() throws {
    let coPromise = CoPromise<Int>()
    let nioFuture = coPromise.eventLoopFuture(on: loop)
    coPromise.success(9)
    XCTAssertEqual(try nioFuture.wait(), 9)

    let canceled = CoPromise<Int>()
    let canceledNIO = canceled.eventLoopFuture(on: loop)
    canceled.cancel()
    XCTAssertThrowsError(try canceledNIO.wait()) {
      XCTAssertEqual($0 as? CoFutureError, .canceled)
    }

    XCTAssertEqual(try CoFuture(result: .success(4)).eventLoopFuture(on: loop).wait(), 4)
  }

  func testEventLoopFutureCompletedOnItsLoopCompletesNIOCallbacksInline() throws {
    // Resolving the Covenant promise on the loop thread: NIO runs the callback at once, in
    // the same task (no hop), so the flag is set before the resolving task ends.
    let promise = Promise<Int>.pending()
    let nioFuture = promise.eventLoopFuture(on: loop)
    let sawInline = try loop.submit { () -> Bool in
      nonisolated(unsafe) var ran = false
      nioFuture.whenSuccess { _ in ran = true }
      promise.fulfill(1)
      return ran
    }.wait()
    XCTAssertTrue(sawInline)
  }

  func testAwaitInsideACoroutineOnTheLoop() {
    let loop = self.loop!
    let future = loop.coroutineFuture { () -> Int in
      let a = try loop.scheduleTask(in: .milliseconds(1)) { 20 }.futureResult.await()
      let b = try loop.makeSucceededFuture(22).await()
      XCTAssertTrue(loop.inEventLoop)
      return a + b
    }
    XCTAssertEqual(value(of: future), 42)
  }

  func testAwaitFromACoroutineOnADispatchQueueContinuesOnTheQueue() {
    let loop = self.loop!
    let queue = DispatchQueue(label: "test")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 1)
    let future = queue.coroutineFuture { () -> Bool in
      let v = try loop.submit { 5 }.await()
      XCTAssertEqual(v, 5)
      return DispatchQueue.getSpecific(key: key) == 1
    }
    XCTAssertEqual(value(of: future), true)
  }

  func testAwaitPropagatesErrors() {
    let loop = self.loop!
    let future = loop.coroutineFuture { () -> Int in
      try (loop.makeFailedFuture(TestError()) as EventLoopFuture<Int>).await()
    }
    XCTAssertThrowsError(try outcome(of: future).get()) { XCTAssertTrue($0 is TestError) }
  }

  func testAwaitOutsideACoroutineThrows() {
    XCTAssertThrowsError(try loop.makeSucceededFuture(1).await()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  func testCancellingTheCoroutineInterruptsAnAwaitOnANeverCompletingFuture() throws {
    let loop = self.loop!
    let nioPromise = loop.makePromise(of: Int.self)
    let sawCancel = CoPromise<Bool>()
    let future = loop.coroutineFuture { () -> Int in
      do {
        return try nioPromise.futureResult.await()
      } catch CoroutineError.canceled {
        sawCancel.success(true)
        throw CoroutineError.canceled
      }
    }
    // Cancel once the coroutine is suspended in the await (after its first loop task).
    try loop.submit {}.wait()
    future.cancel()
    XCTAssertEqual(value(of: sawCancel), true)
    XCTAssertThrowsError(try outcome(of: future).get()) {
      XCTAssertEqual($0 as? CoFutureError, .canceled)
    }
    nioPromise.succeed(0)  // the NIO future completes later, unobserved
  }
}
