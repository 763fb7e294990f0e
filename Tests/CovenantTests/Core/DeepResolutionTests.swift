import Covenant
import Dispatch
import Foundation
import XCTest

/// "Depth is unbounded" (Architecture.md, "The promise core: cells and reactions"): resolving
/// the head of a chain of promises or futures that adopt or forward each other's outcome uses
/// the same stack at any depth, even when the head is resolved inside a coroutine with a 64 KiB
/// stack.
///
/// Every test builds its chain twice, `DeepChain.shallow` and `DeepChain.depth` levels deep,
/// resolves each head inside a fresh 64 KiB coroutine, checks the outcome at the far end and
/// checks that the deep resolution touched no more stack than the shallow one (plus a little
/// for a frame that only a long queue reaches). The figures are printed as
/// `deep-resolution: <chain> depth <n>: peak stack <bytes> bytes`.
final class DeepResolutionTests: XCTestCase {
  private let queue = DispatchQueue(label: "deep-resolution")

  // MARK: Promise operators that adopt a returned promise

  func testThenReturningAPendingPromise() {
    let queue = queue
    checkNested("then returning a promise") { next in
      Promise(()).then(on: queue) { _ in next() }
    }
  }

  func testRecoverReturningAPendingPromise() {
    let queue = queue
    checkNested("recover returning a promise") { next in
      Promise<Int>(TestError(1)).recover(on: queue) { _ in next() }
    }
  }

  func testWorkBlockReturningAPendingPromise() {
    let queue = queue
    checkNested("work block returning a promise") { next in Promise<Int>(on: queue) { next() } }
  }

  func testReduce() {
    checkDepth("reduce") { depth, built in
      defer { built() }
      let head = Promise<Int>()
      return (head, head.reduce(on: queue, 0..<depth) { total, _ in Promise(total) })
    }
  }

  // MARK: Promise operators that forward an outcome

  func testAlways() {
    checkIterated("always") { [queue] in $0.always(on: queue) {} }
  }

  func testValidate() {
    checkIterated("validate") { [queue] in $0.validate(on: queue) { _ in true } }
  }

  func testTimeout() {
    checkIterated("timeout", depth: DeepChain.timerDepth) { [queue] in $0.timeout(on: queue, 3_600)
    }
  }

  func testRetry() {
    let queue = queue
    checkNested("retry") { next in retry(on: queue, attempts: 0) { next() } }
  }

  func testRace() {
    checkIterated("race") { [queue] in race(on: queue, [$0]) }
  }

  func testAll() {
    checkIterated("all") { [queue] in all(on: queue, [$0]).then(on: queue) { $0[0] } }
  }

  func testAny() {
    checkIterated("any") { [queue] in any(on: queue, [$0]).then(on: queue) { $0[0].value ?? -1 } }
  }

  /// `wrap` whose completion handler is called by an observer of the next level, synchronously
  /// as the next level completes.
  func testWrapCompletedFromAFutureObserver() {
    let queue = queue
    checkNested("wrap") { next in
      wrap(on: queue) { (handler: @escaping @Sendable (Int) -> Void) in
        CoFuture(next()).whenSuccess(handler)
      }
    }
  }

  func testConversionsBetweenPromiseAndFuture() {
    checkIterated("Promise(CoFuture(promise))") { Promise(CoFuture($0)) }
  }

  // MARK: CoFuture operators

  func testFutureMap() {
    checkFutureIterated("CoFuture.map") { $0.map { $0 } }
  }

  func testFutureRecover() {
    checkFutureIterated("CoFuture.recover", failHead: true) { $0.recover { _ in 42 } }
  }

  func testFutureFlatMap() {
    checkFutureIterated("CoFuture.flatMap") { $0.flatMap { CoFuture(value: $0) } }
  }

  func testFutureFlatMapResult() {
    checkFutureIterated("CoFuture.flatMapResult") { $0.flatMapResult { CoFuture(result: $0) } }
  }

  func testFutureFlatMapError() {
    checkFutureIterated("CoFuture.flatMapError", failHead: true, expected: .failure(TestError(1))) {
      $0.flatMapError { _ in CoFuture(error: TestError(1)) }
    }
  }

  func testCoPromiseCompletedWithAFuture() {
    checkFutureIterated("CoPromise.complete(with:)") { top in
      let next = CoPromise<Int>()
      next.complete(with: top)
      return next
    }
  }

  // MARK: Coroutines awaiting what they adopt

  /// `CoFuture(task:)` coroutines each awaiting the one before: every wake-up runs the next
  /// coroutine at once on the resolving thread. Each suspended coroutine holds a stack of its
  /// own, so the depth is bounded by memory (a few pages each), not by the promise core.
  func testCoroutinesAwaitingEachOther() {
    checkFutureIterated("CoFuture(task:) awaiting the previous", depth: DeepChain.coroutineDepth) {
      previous in CoFuture { try previous.await() }
    }
  }

  // MARK: Loops written the way users write them

  /// A retry loop: each failed attempt's `recover` returns the next attempt; the last attempt
  /// is returned as it is, and succeeds once everything else has failed.
  func testRecursiveRetryLoop() {
    let queue = queue
    checkDepth("retry loop (recover returning the next attempt)") { depth, built in
      let lastAttempt = Promise<Int>()
      @Sendable func attempt(_ left: Int) -> Promise<Int> {
        if left == 0 {
          built()
          return lastAttempt
        }
        return Promise<Int>(TestError(left)).recover(on: queue) { _ in attempt(left - 1) }
      }
      return (lastAttempt, attempt(depth))
    }
  }

  /// A poll loop: `then` checks the state and returns the next poll until it is ready; the
  /// last poll waits for the state to change.
  func testRecursivePollLoop() {
    let queue = queue
    checkDepth("poll loop (then returning the next poll)") { depth, built in
      let stateChanged = Promise<Int>()
      @Sendable func poll(_ left: Int) -> Promise<Int> {
        if left == 0 {
          built()
          return stateChanged
        }
        return Promise(false).then(on: queue) { isReady -> Promise<Int> in
          isReady ? Promise(0) : poll(left - 1)
        }
      }
      return (stateChanged, poll(depth))
    }
  }

  /// A stream read chunk by chunk: each chunk's `flatMap` reads the next one and recurses;
  /// chunks arrive one at a time from an I/O loop, the end of the stream inside a coroutine.
  func testRecursiveStreamRead() {
    let stream = ChunkStream()
    let depth = DeepChain.depth
    let shallow = DeepChain.shallow
    var peaks: [Int?] = []
    for chunks in [shallow, depth] {
      let total = stream.readAll(chunks: chunks)
      stream.deliverAllButTheEnd()
      let peak = StackProbe.peakStackUse { stream.deliverTheEnd() }
      XCTAssertEqual(try total.result?.get(), chunks)
      report("stream read (flatMap per chunk)", depth: chunks, peak: peak)
      peaks.append(peak)
    }
    assertIndependentOfDepth("stream read", peaks)
  }

  // MARK: Harness

  /// Builds a chain of promises `depth` deep with `build` (whose blocks run on `queue`; it
  /// calls `built` once the last level is in place), fulfils its head with 42 inside a
  /// coroutine with a 64 KiB stack, and checks that the far end is fulfilled with 42 — at two
  /// depths, with the stack use of the deep one no larger than the shallow one's.
  private func checkDepth(
    _ name: String, depth: Int = DeepChain.depth,
    _ build: (Int, _ built: @escaping @Sendable () -> Void) -> (
      head: Promise<Int>, top: Promise<Int>
    ),
    file: StaticString = #filePath, line: UInt = #line
  ) {
    var peaks: [Int?] = []
    for levels in [DeepChain.shallow, depth] {
      let built = DispatchSemaphore(value: 0)
      let (head, top) = build(levels) { built.signal() }
      built.wait()
      let peak = StackProbe.peakStackUse { head.fulfill(42) }
      XCTAssertEqual(try awaitPromise(top), 42, name, file: file, line: line)
      report(name, depth: levels, peak: peak)
      peaks.append(peak)
    }
    assertIndependentOfDepth(name, peaks, file: file, line: line)
  }

  /// `checkDepth` for a chain built by recursion, as users write it: each level is `level`,
  /// which calls `next` where the user's code would (inside its block) to get the level below;
  /// the bottom one is the head.
  private func checkNested(
    _ name: String,
    _ level: @escaping @Sendable (_ next: @escaping @Sendable () -> Promise<Int>) -> Promise<Int>,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let build = {
      (depth: Int, built: @escaping @Sendable () -> Void) -> (Promise<Int>, Promise<Int>) in
      let head = Promise<Int>()
      return (head, nested(depth, head: head, built: built, level))
    }
    checkDepth(name, build, file: file, line: line)
  }

  /// `checkDepth` for a chain built by applying `step` to the head `depth` times.
  private func checkIterated(
    _ name: String, depth: Int = DeepChain.depth, _ step: (Promise<Int>) -> Promise<Int>,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let build = {
      (depth: Int, built: @escaping @Sendable () -> Void) -> (Promise<Int>, Promise<Int>) in
      defer { built() }
      let head = Promise<Int>()
      var top = head
      for _ in 0..<depth { top = step(top) }
      return (head, top)
    }
    checkDepth(name, depth: depth, build, file: file, line: line)
  }

  /// `checkDepth` for futures: a chain built by applying `step` to a `CoPromise` head `depth`
  /// times; the head is completed with 42 (or fails with `TestError(0)` when `failHead`) and
  /// the far end must have `expected` once the completing call returns.
  private func checkFutureIterated(
    _ name: String, depth: Int = DeepChain.depth, failHead: Bool = false,
    expected: Result<Int, TestError> = .success(42), _ step: (CoFuture<Int>) -> CoFuture<Int>,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    var peaks: [Int?] = []
    for levels in [DeepChain.shallow, depth] {
      let head = CoPromise<Int>()
      var top: CoFuture<Int> = head
      for _ in 0..<levels { top = step(top) }
      let peak = StackProbe.peakStackUse {
        if failHead { head.fail(TestError(0)) } else { head.success(42) }
      }
      XCTAssertEqual(
        top.result.map { $0.mapError { $0 as! TestError } }, expected, name, file: file, line: line)
      report(name, depth: levels, peak: peak)
      peaks.append(peak)
    }
    assertIndependentOfDepth(name, peaks, file: file, line: line)
  }

  private func report(_ name: String, depth: Int, peak: Int?) {
    let figure = peak.map { "\($0) bytes" } ?? "not measurable here"
    print("deep-resolution: \(name) depth \(depth): peak stack \(figure)")
  }

  /// The deep resolution touched no more stack than the shallow one, give or take the slack.
  private func assertIndependentOfDepth(
    _ name: String, _ peaks: [Int?], file: StaticString = #filePath, line: UInt = #line
  ) {
    guard let shallow = peaks[0], let deep = peaks[1] else { return }
    XCTAssertLessThanOrEqual(
      deep, shallow + DeepChain.slack, "\(name): stack use grew with depth", file: file, line: line)
  }
}

/// The depths of `DeepResolutionTests`.
enum DeepChain {
  /// A million levels in optimized builds (the slowest chain, `wrap` through a future
  /// observer, takes about 6 s there on a 2-core machine). Unoptimized builds run a level
  /// four to five times slower, so they go 250,000 deep (at most about 2 s per chain); the
  /// sanitizers, slower still, a twentieth of that. Stack use independent of depth shows at
  /// any of these: a frame per level would overflow the 64 KiB stack within a few hundred
  /// levels (about 240 bytes a level before the resolution drain).
  static let depth: Int = {
    #if DEBUG
      let depth = 250_000
    #else
      let depth = 1_000_000
    #endif
    return TestScale.runsUnderSanitizer && !TestScale.fullSizeRequested ? depth / 20 : depth
  }()
  /// The depth whose stack use the deep chain's is compared with.
  static let shallow = 1_000
  /// Each `timeout` arms a dispatch timer, which stays armed (an hour) after the test.
  static let timerDepth = depth / 10
  /// Each suspended coroutine keeps a stack of its own (a few pages of memory).
  static let coroutineDepth = TestScale.stress(10_000, sanitizerDivisor: 10)
  /// Stack a deep resolution may use beyond a shallow one's: what varies from one run to the
  /// next whatever the depth (`free` consolidating the heap, a first use of a generic type),
  /// far below a frame per level (which would overflow the 64 KiB stack long before).
  static let slack = 4_096
}

/// A chain `levels` deep built by recursion: `level` gets the builder of the level below.
private func nested(
  _ levels: Int, head: Promise<Int>, built: @escaping @Sendable () -> Void,
  _ level: @escaping @Sendable (_ next: @escaping @Sendable () -> Promise<Int>) -> Promise<Int>
) -> Promise<Int> {
  if levels == 0 {
    built()
    return head
  }
  return level { nested(levels - 1, head: head, built: built, level) }
}

/// A byte stream read as chunks: `readAll` reads chunk after chunk with a `flatMap` that
/// recurses; the "I/O loop" (`deliver…`) answers one outstanding read at a time.
private final class ChunkStream: @unchecked Sendable {
  private let lock = NSLock()
  private var outstanding: CoPromise<Int?>?
  private var remaining = 0

  /// Starts reading `chunks` chunks of one byte each; the future has the total.
  func readAll(chunks: Int) -> CoFuture<Int> {
    lock.withLock { remaining = chunks }
    return read(total: 0)
  }

  private func read(total: Int) -> CoFuture<Int> {
    nextChunk().flatMap { chunk in
      guard let chunk else { return CoFuture(value: total) }
      return self.read(total: total + chunk)
    }
  }

  private func nextChunk() -> CoFuture<Int?> {
    let chunk = CoPromise<Int?>()
    lock.withLock { outstanding = chunk }
    return chunk
  }

  /// Answers reads with one byte each until only the end of the stream is left to deliver.
  func deliverAllButTheEnd() {
    while let read = takeChunkRead() { read.success(1) }
  }

  /// Answers the last read with the end of the stream.
  func deliverTheEnd() {
    lock.withLock { outstanding.take() }!.success(nil)
  }

  /// The outstanding read if a chunk (not the end) answers it.
  private func takeChunkRead() -> CoPromise<Int?>? {
    lock.withLock {
      guard remaining > 0, let read = outstanding.take() else { return nil }
      remaining -= 1
      return read
    }
  }
}
