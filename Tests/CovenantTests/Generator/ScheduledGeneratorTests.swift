import Covenant
import CovenantTesting
import Foundation
import XCTest

private struct BodyFailure: Error, Equatable {}

/// Something a generator body holds, to see that unwinding releases it.
private final class Held: Sendable {}

/// `scheduler.generator { yield in … }`: a body that is a coroutine on its scheduler.
final class ScheduledGeneratorTests: XCTestCase {
  func testBodyAwaitsInsideAndABlockedThreadConsumes() {
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      for i in 0..<5 {
        try Coroutine.delay(.milliseconds(1))
        let promise = CoPromise<Int>()
        DispatchQueue.global().async { promise.success(i * 10) }
        try yield(try promise.await())
      }
    }
    XCTAssertEqual(Array(gen), [0, 10, 20, 30, 40])  // next() blocks outside a coroutine
    XCTAssertTrue(gen.isFinished)
    XCTAssertNil(gen.error)
  }

  func testConsumedFromACoroutineWithAForLoop() throws {
    let gen = DispatchQueue(label: "producer").generator {
      (yield: ScheduledGenerator<String>.Yield) in
      for word in ["a", "b", "c"] { try yield(word) }
    }
    let words = try wait(
      for: DispatchQueue(label: "consumer").coroutineFuture { () -> [String] in
        var words: [String] = []
        for word in gen { words.append(word) }  // suspends the consumer in next()
        return words
      })
    XCTAssertEqual(words, ["a", "b", "c"])
  }

  /// coobjc's semantics: after n elements are taken, the body has run the statements after its
  /// n-th `yield` and waits in the next one, whose argument is evaluated only when asked for.
  func testRunsOneAheadAndEvaluatesTheNextElementOnlyWhenAsked() {
    let scheduler = TestScheduler()
    let after = Locked(-1)
    let evaluated = Locked(0)
    let gen = scheduler.generator { (yield: ScheduledGenerator<Int>.Yield) in
      var i = 0
      while true {
        try yield(
          evaluated.withLock {
            $0 += 1
            return i
          })
        after.withLock { $0 = i }
        i += 1
      }
    }
    scheduler.run()
    XCTAssertEqual(after.withLock { $0 }, -1, "the body waits in its first yield")
    XCTAssertEqual(evaluated.withLock { $0 }, 0, "nothing is evaluated before it is asked for")
    let taken = Locked<[Int]>([])
    scheduler.startCoroutine {
      for _ in 0..<10 { taken.withLock { $0.append(gen.next()!) } }
    }
    scheduler.run()
    XCTAssertEqual(taken.withLock { $0 }, Array(0..<10))
    XCTAssertEqual(after.withLock { $0 }, 9, "ran the statement after the 10th yield")
    XCTAssertEqual(evaluated.withLock { $0 }, 10, "the 11th element is not computed")
    gen.cancel()
    scheduler.run()
    XCTAssertTrue(gen.isFinished)
    XCTAssertEqual(after.withLock { $0 }, 9)
    XCTAssertEqual(evaluated.withLock { $0 }, 10)
  }

  func testBodyErrorReachesTheConsumerOnce() {
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      try yield(1)
      throw BodyFailure()
    }
    XCTAssertEqual(try gen.nextElement(), 1)
    XCTAssertThrowsError(try gen.nextElement()) {
      XCTAssertEqual($0 as? BodyFailure, BodyFailure())
    }
    XCTAssertNil(try gen.nextElement())
    XCTAssertNil(gen.next())
    XCTAssertEqual(gen.error as? BodyFailure, BodyFailure())
    XCTAssertFalse(gen.isCanceled)
  }

  func testYieldOfAFutureOrAPromiseHandsOverItsValue() {
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      let future = CoPromise<Int>()
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) {
        future.success(1)
      }
      try yield(future)
      try yield(Promise<Int>(on: .global()) { 2 })
      try yield(CoFuture(result: .success(3)))
    }
    XCTAssertEqual(Array(gen), [1, 2, 3])
  }

  /// A `yield` whose argument throws leaves the waiting consumer waiting for the next `yield`.
  func testAFailedYieldKeepsTheRequestForTheNextOne() {
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      do {
        try yield(CoFuture(result: .failure(BodyFailure())))
        XCTFail("the failed future's error is thrown by yield")
      } catch is BodyFailure {}
      try yield(7)
    }
    XCTAssertEqual(Array(gen), [7])
  }

  func testCancelUnwindsTheBodyAndReleasesWhatItHolds() throws {
    weak var weakHeld: Held?
    let deferRan = Locked(false)
    let gen: ScheduledGenerator<Int> = {
      let held = Held()
      weakHeld = held
      return DispatchQueue.global().generator { yield in
        defer { deferRan.withLock { $0 = true } }
        withExtendedLifetime(held) {}
        var i = 0
        while true {
          try yield(i)
          i += 1
        }
      }
    }()
    XCTAssertEqual(gen.next(), 0)
    gen.cancel()
    try gen.join()
    XCTAssertTrue(deferRan.withLock { $0 })
    XCTAssertTrue(gen.isCanceled)
    XCTAssertTrue(gen.isFinished)
    XCTAssertNil(gen.next())
    XCTAssertThrowsError(try gen.nextElement()) {
      XCTAssertEqual($0 as? CoroutineError, .canceled)
    }
    XCTAssertNil(weakHeld, "the unwound body released its captures")
  }

  func testDroppingTheGeneratorUnwindsTheBody() throws {
    weak var weakHeld: Held?
    let deferRan = Locked(false)
    let scope = CoScope()  // only to join the body's coroutine: the scope holds no generator
    do {
      let held = Held()
      weakHeld = held
      var gen: ScheduledGenerator<Int>? = DispatchQueue.global().generator(in: scope) {
        yield in
        defer { deferRan.withLock { $0 = true } }
        withExtendedLifetime(held) {}
        for i in 0... { try yield(i) }
      }
      XCTAssertEqual(gen?.next(), 0)
      XCTAssertEqual(gen?.next(), 1)
      gen = nil
    }
    try scope.join()
    XCTAssertTrue(deferRan.withLock { $0 })
    XCTAssertNil(weakHeld)
    withExtendedLifetime(scope) {}
  }

  func testCancellingTheScopeCancelsTheGenerator() throws {
    let scope = CoScope()
    let deferRan = Locked(false)
    let gen = DispatchQueue.global().generator(in: scope) {
      (yield: ScheduledGenerator<Int>.Yield) in
      defer { deferRan.withLock { $0 = true } }
      for i in 0... { try yield(i) }
    }
    XCTAssertEqual(gen.next(), 0)
    scope.cancel()
    try gen.join()
    XCTAssertTrue(deferRan.withLock { $0 })
    XCTAssertTrue(gen.isCanceled)
    XCTAssertNil(gen.next())
  }

  func testAddedToAScopeLikeAnyCancellable() throws {
    let scope = CoScope()
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      for i in 0... { try yield(i) }
    }.added(to: scope)
    XCTAssertEqual(gen.next(), 0)
    scope.cancel()
    try gen.join()
    XCTAssertTrue(gen.isCanceled)
  }

  func testABodyCancelledBeforeItStartsNeverRuns() {
    let scheduler = TestScheduler()
    let ran = Locked(false)
    let gen = scheduler.generator { (yield: ScheduledGenerator<Int>.Yield) in
      ran.withLock { $0 = true }
      try yield(1)
    }
    gen.cancel()
    scheduler.run()
    XCTAssertFalse(ran.withLock { $0 })
    XCTAssertTrue(gen.isFinished)
    XCTAssertTrue(gen.isCanceled)
    XCTAssertNil(gen.next())
  }

  /// A consumer cancelled while it waits withdraws its request: the element goes to the next
  /// consumer, none is lost.
  func testACancelledConsumerLosesNoElement() throws {
    let release = CoPromise<Void>()
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      try release.await()
      for i in 0..<3 { try yield(i) }
    }
    let scope = CoScope()
    let started = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)
    let outcome = Locked<Result<Int?, any Error>?>(nil)
    DispatchQueue.global().startCoroutine(in: scope) {
      started.signal()
      defer { ended.signal() }
      outcome.withLock { $0 = Result { try gen.nextElement() } }
    }
    started.wait()
    Thread.sleep(forTimeInterval: 0.01)  // let it ask (any order is correct; this one tests more)
    scope.cancel()
    // The consumer has withdrawn its request once its coroutine has run its cancellation (the
    // body, held by `release`, has taken no request yet).
    ended.wait()
    XCTAssertThrowsError(try outcome.withLock { $0 }!.get())
    release.success()
    XCTAssertEqual(Array(gen), [0, 1, 2])
  }

  func testManyConsumersOnDifferentQueuesShareTheElements() throws {
    let count = 2_000
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      for i in 0..<count { try yield(i) }
    }
    let queues: [DispatchQueue] =
      (0..<6).map { DispatchQueue(label: "consumer \($0)") } + [
        .global(), DispatchQueue(label: "concurrent", attributes: .concurrent),
      ]
    let consumers = queues.map { queue in
      queue.coroutineFuture { () -> [Int] in
        var taken: [Int] = []
        while let value = try gen.nextElement() { taken.append(value) }
        return taken
      }
    }
    var all: [Int] = []
    for consumer in consumers { all += try wait(for: consumer, timeout: 60) }
    XCTAssertEqual(all.sorted(), Array(0..<count), "each element goes to exactly one consumer")
  }

  func testBodyRunsOnItsScheduler() {
    let (queue, key) = DispatchQueue.tagged("generator home")
    let gen = queue.generator { (yield: ScheduledGenerator<Bool>.Yield) in
      try yield(DispatchQueue.getSpecific(key: key) == "generator home")
      try Coroutine.delay(.milliseconds(1))
      try yield(Coroutine.currentScheduler as? DispatchQueue === queue)
    }
    XCTAssertEqual(Array(gen), [true, true])
  }

  func testCurrentYieldIsTheBodysOwn() throws {
    let gen = DispatchQueue.global().generator { (yield: ScheduledGenerator<Int>.Yield) in
      try yield(ScheduledGenerator<Int>.Yield.current == nil ? 0 : 1)
      try yield(ScheduledGenerator<String>.Yield.current == nil ? 0 : 1)  // another element type
      try ScheduledGenerator<Int>.Yield.current!(2)
    }
    XCTAssertEqual(Array(gen), [1, 0, 2])
    XCTAssertNil(ScheduledGenerator<Int>.Yield.current)
    let elsewhere = try wait(
      for: DispatchQueue.global().coroutineFuture { ScheduledGenerator<Int>.Yield.current == nil })
    XCTAssertTrue(elsewhere)
  }
}
