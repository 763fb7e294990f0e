import Covenant
import CovenantTesting
import Dispatch
import Foundation
import Testing

/// `expectNoSuspendedCoroutines` and the `.noSuspendedCoroutines` trait. Tests here run in
/// parallel with others, so each checks only the coroutines it names. Their coroutines run on
/// a serial queue of their own (which gets a thread of its own): the checks block the calling
/// thread while they wait, and Swift Testing's threads, like the global queue's and those of
/// concurrent queues that target it, are as many as the cores (two here).
@Suite struct NoSuspendedCoroutinesTests {
  private let queue = DispatchQueue(label: "no-suspended-coroutines")

  @Test func passesWhenTheCoroutinesFinishInTime() throws {
    let promise = Promise<Int>()
    queue.startCoroutine(name: "finishes") { _ = try promise.await() }
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { promise.fulfill(1) }
    try expectNoSuspendedCoroutines(timeout: 5) { $0.name == "finishes" }
  }

  @Test func throwsTheDumpOfCoroutinesLeftSuspended() throws {
    let promise = Promise<Int>()
    let scope = CoScope()
    let checkpoint = CoroutineSnapshot.nextID
    queue.startCoroutine(in: scope, name: "left behind") {
      _ = try promise.await()
    }
    queue.startCoroutine(in: scope, name: "left behind, leaked") {
      _ = try Coroutine.await { (_: @escaping @Sendable (Int) -> Void) in }
    }
    // The check below gives them only 0.1 s: first let both reach their waits (however busy
    // the machine), so what it reports does not depend on how fast the queue ran them.
    let bothWaiting = waitUntil(timeout: 10) {
      let waiting = CoroutineSnapshot.take(backtraces: false).coroutines.filter {
        $0.id >= checkpoint && $0.name?.hasPrefix("left behind") == true && $0.state == .suspended
      }
      return waiting.count == 2 && waiting.contains { $0.isLeaked }
    }
    try #require(bothWaiting, "the two coroutines did not reach their waits in 10 s")
    var thrown: SuspendedCoroutinesError?
    do {
      try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 0.1) {
        $0.name?.hasPrefix("left behind") == true
      }
    } catch let error as SuspendedCoroutinesError {
      thrown = error
    }
    let error = try #require(thrown)
    #expect(error.coroutines.count == 2)
    #expect(error.coroutines.allSatisfy { $0.state == .suspended })
    #expect(error.leaked.map(\.name) == ["left behind, leaked"])
    let text = error.description
    #expect(text.contains("2 coroutine(s) still alive after 0.1 s, 1 of them leaked"))
    #expect(text.contains("\"left behind\" [awaiting Promise<Int>"))
    #expect(text.contains("leaked: nothing can resume it"))
    #expect(text.contains("NoSuspendedCoroutinesTests.swift"))
    scope.cancel()
    try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 5) {
      $0.name?.hasPrefix("left behind") == true
    }
  }

  #if compiler(>=6.1)  // the trait needs Swift Testing's TestScoping (Swift 6.1)
    @Test(.noSuspendedCoroutines(timeout: 5, where: { $0.name == "trait, clean" }))
    func traitAcceptsATestWhoseCoroutinesFinish() throws {
      let value = try runCoroutine(on: queue) { 7 }
      #expect(value == 7)
      let future = queue.coroutineFuture(name: "trait, clean") { 1 }
      #expect(try wait(for: future) == 1)
    }

    @Test func traitRecordsAnIssueForCoroutinesLeftAlive() async throws {
      let promise = Promise<Int>()
      let trait = NoSuspendedCoroutinesTrait.noSuspendedCoroutines(timeout: 0.05) {
        $0.name == "trait, left"
      }
      let test = try #require(Test.current)
      let testCase = try #require(Test.Case.current)
      try await withKnownIssue {
        try await trait.provideScope(for: test, testCase: testCase) {
          queue.startCoroutine(name: "trait, left") { _ = try promise.await() }
        }
      } matching: { issue in
        issue.comments.contains { $0.rawValue.contains("\"trait, left\"") }
      }
      promise.fulfill(0)
      try expectNoSuspendedCoroutines(timeout: 5) { $0.name == "trait, left" }
    }

    /// The trait's wait suspends (`Task.sleep`) rather than blocking its thread: here the test
    /// runs on an executor of one thread, and what lets its coroutine finish is a task on that
    /// same executor, which can run only while the trait's wait leaves the thread free. A
    /// blocking wait would hold it for the whole timeout and record an issue.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func traitWaitsWithoutBlockingItsThread() async throws {
      let executor = OneThreadExecutor()
      let trait = NoSuspendedCoroutinesTrait.noSuspendedCoroutines(timeout: 10) {
        $0.name == "trait, released by a task"
      }
      let test = try #require(Test.current)
      let testCase = try #require(Test.Case.current)
      let queue = self.queue
      try await withTaskExecutorPreference(executor) {
        try await trait.provideScope(for: test, testCase: testCase) {
          let promise = Promise<Int>()
          queue.startCoroutine(name: "trait, released by a task") { _ = try promise.await() }
          Task(executorPreference: executor) { promise.fulfill(1) }
        }
      }
    }
  #endif
}

/// Polls `condition` every millisecond until it holds or `timeout` seconds have passed (a bound
/// against a hang, not a timing); returns whether it held.
private func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
  let deadline = Date(timeIntervalSinceNow: timeout)
  while !condition() {
    if Date() >= deadline { return false }
    Thread.sleep(forTimeInterval: 0.001)
  }
  return true
}

#if compiler(>=6.1)
  /// A task executor with one thread (a serial queue): what runs on it waits while a job of its
  /// own blocks.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  private final class OneThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "one-thread executor")

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
  }
#endif
