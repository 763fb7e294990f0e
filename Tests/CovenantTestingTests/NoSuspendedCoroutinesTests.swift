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
  #endif
}
