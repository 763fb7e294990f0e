import Covenant
import Dispatch
import Foundation
import XCTest

/// Errors thrown out of `startCoroutine` bodies reach the uncaught-error handlers with the
/// coroutine's start site.
final class UncaughtErrorTests: XCTestCase {
  private struct Failure: Error, Equatable { let tag: String }

  /// Installs a process-wide handler that records this test's failures (other tests'
  /// coroutines may throw meanwhile) and restores the previous one afterwards.
  private func recordingUncaughtErrors(
    _ body: (Locked<[UncaughtCoroutineError]>) throws -> Void
  ) rethrows {
    let seen = Locked([UncaughtCoroutineError]())
    let previous = Coroutine.uncaughtErrorHandler
    Coroutine.uncaughtErrorHandler = { failure in
      if failure.error is Failure { seen.withLock { $0.append(failure) } }
    }
    defer { Coroutine.uncaughtErrorHandler = previous }
    try body(seen)
  }

  func testTheProcessWideHandlerGetsTheErrorAndTheStartSite() throws {
    try recordingUncaughtErrors { seen in
      let scope = CoScope()
      let line: UInt = #line + 1
      DispatchQueue.global().startCoroutine(in: scope) { throw Failure(tag: "plain") }
      try scope.join()
      let failure = try XCTUnwrap(seen.withLock { $0.first })
      XCTAssertEqual(failure.error as? Failure, Failure(tag: "plain"))
      XCTAssertEqual("\(failure.file)", #fileID)
      XCTAssertEqual(failure.line, line)
      XCTAssertTrue(
        failure.description.hasSuffix("(coroutine started at \(#fileID):\(line))"),
        failure.description)
    }
  }

  func testEveryStartFormRecordsItsSite() throws {
    try recordingUncaughtErrors { seen in
      let scope = CoScope()
      let queue = DispatchQueue(label: "uncaught.forms")
      let first: UInt = #line + 1
      queue.startCoroutine(in: scope, task: { throw Failure(tag: "labeled") })
      queue.startCoroutine(in: scope, stackSize: 1 << 16) { throw Failure(tag: "sized") }
      Coroutine.start { throw Failure(tag: "immediate") }
      let asValue: (CoScope?, @escaping @Sendable () throws -> Void) -> Void =
        queue.startCoroutine(in:task:)
      asValue(scope) { throw Failure(tag: "function value") }
      try scope.join()
      let byTag = Dictionary(
        seen.withLock { $0 }.map { (($0.error as! Failure).tag, $0.line) },
        uniquingKeysWith: { first, _ in first })
      XCTAssertEqual(byTag["labeled"], first)
      XCTAssertEqual(byTag["sized"], first + 1)
      XCTAssertEqual(byTag["immediate"], first + 2)
      XCTAssertEqual(byTag["function value"], 0, "a function value cannot know its caller")
    }
  }

  func testCancellationAndFutureErrorsAreNotReported() throws {
    try recordingUncaughtErrors { seen in
      let scope = CoScope()
      let started = DispatchSemaphore(value: 0)
      DispatchQueue.global().startCoroutine(in: scope) {
        started.signal()
        try CoPromise<Void>().await()  // throws CoroutineError.canceled below
      }
      XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
      try scope.cancelAndJoin()
      let future = DispatchQueue.global().coroutineFuture { () throws -> Int in
        throw Failure(tag: "future")
      }
      try future.join()
      XCTAssertThrowsError(try future.result?.get()) {
        XCTAssertEqual($0 as? Failure, Failure(tag: "future"), "the future got it")
      }
      XCTAssertEqual(seen.withLock { $0.count }, 0)
    }
  }

  func testAScopesHandlerTakesPrecedenceAndServesChildScopes() throws {
    try recordingUncaughtErrors { global in
      let parent = CoScope()
      let child = CoScope().added(to: parent)
      let mine = Locked([String]())
      parent.uncaughtErrorHandler = { failure in
        mine.withLock { $0.append((failure.error as? Failure)?.tag ?? "\(failure.error)") }
      }
      DispatchQueue.global().startCoroutine(in: parent) { throw Failure(tag: "parent") }
      DispatchQueue.global().startCoroutine(in: child) { throw Failure(tag: "child") }
      try parent.join()
      XCTAssertEqual(Set(mine.withLock { $0 }), ["parent", "child"])
      XCTAssertEqual(global.withLock { $0.count }, 0, "the scope's handler took them")
      parent.uncaughtErrorHandler = nil
      DispatchQueue.global().startCoroutine(in: child) { throw Failure(tag: "after reset") }
      try parent.join()
      XCTAssertEqual(global.withLock { $0.map { ($0.error as? Failure)?.tag } }, ["after reset"])
    }
  }

  func testTheHandlerCanStopAPipeline() throws {
    // The pattern of the docs: the first failure cancels the whole scope.
    let scope = CoScope()
    let failures = Locked(0)
    scope.uncaughtErrorHandler = { _ in
      failures.withLock { $0 += 1 }
      scope.cancel()
    }
    for index in 0..<3 {
      DispatchQueue.global().startCoroutine(in: scope) {
        if index == 1 { throw Failure(tag: "fatal") }
        try CoPromise<Void>().await()  // cancelled by the handler
      }
    }
    try scope.join()
    XCTAssertEqual(failures.withLock { $0 }, 1)
    XCTAssertTrue(scope.isCanceled)
  }

  // MARK: The default handler

  private static let childVariable = "COVENANT_UNCAUGHT_CHILD"

  func testTheDefaultHandlerWritesToStandardErrorInDebugBuilds() throws {
    let outcome = try ChildProcess.run(
      test: "UncaughtErrorTests/testChildThrowsWithTheDefaultHandler",
      variable: Self.childVariable, value: "1")
    XCTAssertEqual(outcome.status, 0, outcome.stderr)
    #if DEBUG
      XCTAssertTrue(
        outcome.stderr.contains(
          "Covenant: uncaught error Failure(tag: \"default\") (coroutine started at CovenantTests/UncaughtErrorTests.swift:"
        ), outcome.stderr)
    #else
      XCTAssertFalse(outcome.stderr.contains("Covenant: uncaught error"), outcome.stderr)
    #endif
  }

  func testChildThrowsWithTheDefaultHandler() throws {
    guard ProcessInfo.processInfo.environment[Self.childVariable] == "1" else { return }
    let scope = CoScope()
    DispatchQueue.global().startCoroutine(in: scope) { throw Failure(tag: "default") }
    try scope.join()
  }

  func testWriteToStandardErrorFormat() {
    let failure = UncaughtCoroutineError(
      error: Failure(tag: "x"), file: "Module/File.swift", line: 7)
    XCTAssertEqual(
      failure.description, "Failure(tag: \"x\") (coroutine started at Module/File.swift:7)")
    let unknown = UncaughtCoroutineError(error: Failure(tag: "y"), file: "?", line: 0)
    XCTAssertEqual(
      unknown.description, "Failure(tag: \"y\") (coroutine started at an unknown place)")
  }
}
