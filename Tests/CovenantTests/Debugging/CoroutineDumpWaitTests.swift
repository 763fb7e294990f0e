import Covenant
import Dispatch
import Foundation
import XCTest

/// What a dump says of a coroutine's wait: how much of a timed wait's timeout is left, and only
/// the caller's own frames between the folded ends (Covenant's frames folded in debug builds
/// as in release ones).
final class CoroutineDumpWaitTests: XCTestCase {
  private func waitForSuspended(_ name: String, file: StaticString = #filePath, line: UInt = #line)
    -> CoroutineInfo?
  {
    let deadline = DispatchTime.now() + 10
    while DispatchTime.now() < deadline {
      if let info = CoroutineSnapshot.take().coroutines.first(where: { $0.name == name }),
        info.state == .suspended, !info.backtrace.isEmpty
      {
        return info
      }
      usleep(1000)
    }
    XCTFail("\(name) never suspended", file: file, line: line)
    return nil
  }

  // MARK: - Timeouts

  func testATimedWaitSaysHowMuchOfItsTimeoutIsLeft() throws {
    let queue = DispatchQueue(label: "dump.timeouts", attributes: .concurrent)
    let scope = CoScope()
    let future = CoPromise<Int>()
    let promise = Promise<String>()
    let channel = CoChannel<Int>()
    let semaphore = CoSemaphore(value: 0)
    let starts: [(String, @Sendable () throws -> Void)] = [
      ("future", { _ = try future.await(timeout: .seconds(60)) }),
      ("promise", { _ = try promise.await(timeout: .milliseconds(90_000)) }),
      (
        "select",
        {
          try CoChannel.select {
            $0.onReceive(channel) { _ in }
            $0.onTimeout(.seconds(120)) {}
          }
        }
      ),
      ("semaphore", { try semaphore.wait(timeout: .seconds(30)) }),
      ("untimed", { _ = try future.await() }),
    ]
    for (name, body) in starts { queue.startCoroutine(in: scope, name: name, task: body) }

    func expect(_ name: String, timeout: Double, line: UInt = #line) {
      guard let info = waitForSuspended(name, line: line) else { return }
      XCTAssertTrue(info.waitHasTimeout, name, line: line)
      XCTAssertEqual(info.timeoutSeconds ?? 0, timeout, accuracy: 1e-9, name, line: line)
      let remaining = info.timeoutRemainingSeconds ?? -1
      XCTAssertGreaterThan(remaining, timeout - 10, name, line: line)
      XCTAssertLessThanOrEqual(remaining, timeout, name, line: line)
      let text = CoroutineSnapshot.take().filter { $0.name == name }.dump()
      // (A moment later, in a second snapshot: a second less, perhaps.)
      let expected = [Int(remaining), Int(remaining) - 1].map { left in
        (left >= 60 ? "\(left / 60) min \(left % 60) s" : "\(left) s") + " left of a "
      }
      XCTAssertTrue(expected.contains { text.contains($0) }, "\(expected)\n\(text)", line: line)
    }
    expect("future", timeout: 60)
    expect("promise", timeout: 90)
    expect("select", timeout: 120)
    expect("semaphore", timeout: 30)
    let dump = CoroutineSnapshot.take().filter { $0.name == "promise" }.dump()
    XCTAssertTrue(dump.contains("[awaiting Promise<String>, 1 min 2"), dump)
    XCTAssertTrue(dump.contains(" s left of a 1 min 30 s timeout, "), dump)

    let untimed = waitForSuspended("untimed")
    XCTAssertEqual(untimed?.waitHasTimeout, false)
    XCTAssertNil(untimed?.timeoutSeconds)
    XCTAssertNil(untimed?.timeoutRemainingSeconds)
    try scope.cancelAndJoin()
  }

  func testATimeoutOfNeverHasNoRemainingTime() throws {
    let scope = CoScope()
    let future = CoPromise<Int>()
    DispatchQueue.global().startCoroutine(in: scope, name: "never") {
      _ = try future.await(timeout: .never)
    }
    let info = waitForSuspended("never")
    XCTAssertNil(info?.timeoutSeconds)
    XCTAssertNil(info?.timeoutRemainingSeconds)
    try scope.cancelAndJoin()
  }

  // MARK: - Folding

  /// Between the folded ends of a backtrace, only the caller's frames: no frame of Covenant's
  /// own (`awaitCurrent`, `ResolutionCell.awaitValue`, `CoFuture.await(timeout:)`), in a debug
  /// build — where they are not inlined into the caller — as in a release one. (Run in a debug
  /// build, the test failed before the standard library's frames folded with Covenant's.)
  func testCovenantsFramesAreFoldedInEveryBuild() throws {
    let scope = CoScope()
    let future = CoPromise<Int>()
    let promise = Promise<Int>()
    let channel = CoChannel<Int>(capacity: 1)
    let full = CoChannel<Int>(capacity: 1)
    full.offer(0)
    let mutex = CoMutex()
    XCTAssertTrue(mutex.tryLock())
    let semaphore = CoSemaphore(value: 0)
    let inner = CoScope()
    DispatchQueue.global().startCoroutine(in: inner) { try Coroutine.delay(.seconds(60)) }
    let callbacks = CallbackKeeper()
    let queue = DispatchQueue(label: "dump.folding", attributes: .concurrent)
    let starts: [(String, @Sendable () throws -> Void)] = [
      ("timed future", { _ = try future.await(timeout: .seconds(60)) }),
      ("future", { _ = try future.await() }),
      ("promise", { _ = try promise.await() }),
      ("timed promise", { _ = try promise.await(timeout: .seconds(60)) }),
      ("receive", { _ = try channel.awaitReceive() }),
      ("send", { try full.awaitSend(1) }),
      ("iterate", { for _ in channel.makeIterator() {} }),
      ("select", { try CoChannel.select { $0.onReceive(channel) { _ in } } }),
      ("delay", { try Coroutine.delay(.seconds(60)) }),
      ("mutex", { try mutex.lock() }),
      ("semaphore", { try semaphore.wait() }),
      ("timed semaphore", { try semaphore.wait(timeout: .seconds(60)) }),
      ("join", { try inner.join() }),
      (
        "callback",
        {
          _ = try Coroutine.await { (done: @escaping @Sendable (Int) -> Void) in
            callbacks.keep(done)
          }
        }
      ),
      ("async", { try Coroutine.awaitAsync { try await Task.sleep(nanoseconds: 60_000_000_000) } }),
    ]
    for (name, body) in starts { queue.startCoroutine(in: scope, name: name, task: body) }
    func expectFolded(_ info: CoroutineInfo, _ name: String, line: UInt = #line) {
      let text = CoroutineSnapshot.take().filter { $0.id == info.id }.dump()
      let lines = text.split(separator: "\n").filter { $0.hasPrefix("    ") }
        .map { $0.trimmingCharacters(in: .whitespaces) }
      let folds = lines.indices.filter { lines[$0].hasSuffix(" in Covenant") }
      // Folds only at the ends; between them only the test's closures. (A function of
      // Covenant's, or one its closures are in, would read `CovenantCore.…` or
      // `… in CovenantCore.…`.)
      XCTAssertTrue(folds.allSatisfy { $0 == 0 || $0 == lines.count - 1 }, text, line: line)
      for (index, frame) in lines.enumerated() where !folds.contains(index) {
        let message = "\(name): \(frame)\n\(text)"
        XCTAssertTrue(frame.contains(" in CovenantTests."), message, line: line)
        XCTAssertFalse(frame.hasPrefix("CovenantCore."), message, line: line)
        XCTAssertFalse(frame.contains(" in CovenantCore."), message, line: line)
        XCTAssertFalse(frame.contains(" in static CovenantCore."), message, line: line)
      }
      #if DEBUG
        // Nothing is inlined or tail-called away: Covenant's frames at both ends, the test's
        // closure between them. (An optimized build may leave the closure no frame of its
        // own, or the switch's caller none.)
        XCTAssertEqual(folds, [0, lines.count - 1], text, line: line)
        XCTAssertGreaterThan(lines.count, 2, text, line: line)
      #endif
    }
    for (name, _) in starts {
      if let info = waitForSuspended(name) { expectFolded(info, name) }
    }
    let generator = Generator<Int> { yield in
      try yield(1)
      try yield(2)
    }
    _ = generator.next()
    let generatorInfo = CoroutineSnapshot.take().coroutines.last {
      $0.kind == .generator && $0.startFile == "CovenantTests/CoroutineDumpWaitTests.swift"
    }
    XCTAssertNotNil(generatorInfo)
    if let generatorInfo { expectFolded(generatorInfo, "generator") }
    _ = generator.next()
    _ = generator.next()
    inner.cancel()
    try scope.cancelAndJoin()
    mutex.unlock()
  }
}

/// Keeps a callback uncalled (a wait that only cancellation ends).
private final class CallbackKeeper: @unchecked Sendable {
  private let lock = NSLock()
  private var callbacks: [@Sendable (Int) -> Void] = []

  func keep(_ callback: @escaping @Sendable (Int) -> Void) {
    lock.withLock { callbacks.append(callback) }
  }
}
