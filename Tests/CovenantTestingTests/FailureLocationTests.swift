import Covenant
import CovenantTesting
import Dispatch
import Foundation
import Testing

/// The error `body` throws, if it is an `E`.
private func thrown<E: Error>(_: E.Type, by body: () throws -> Void) -> E? {
  do {
    try body()
  } catch let error as E {
    return error
  } catch {}
  return nil
}

/// The helpers' failures name the test's own line, not a line of CovenantTesting: thrown errors
/// carry the caller's `#filePath`/`#line` (a test framework reports a thrown error where the test
/// is, or at `<EXPR>:0`), and the trait records its issue at the test's source location.
@Suite struct FailureLocationTests {
  private let queue = DispatchQueue(label: "FailureLocationTests")

  @Test func waitForAPromiseNamesTheCallersLine() throws {
    let promise = Promise<Int>.pending()
    defer { promise.fulfill(0) }
    let line = #line + 1
    let error = thrown(WaitTimeoutError.self) { _ = try wait(for: promise, timeout: 0.01) }
    #expect(error?.line == line)
    #expect(error?.file == #filePath)
    #expect(error?.description.hasSuffix("(waited at \(#filePath):\(line))") == true)
  }

  @Test func waitForAFutureNamesTheCallersLine() {
    let future = CoPromise<Int>()
    let line = #line + 1
    let error = thrown(WaitTimeoutError.self) { _ = try wait(for: future, timeout: 0.01) }
    #expect(error?.line == line)
    #expect(error?.file == #filePath)
  }

  @Test func runCoroutineNamesTheCallersLine() {
    let queue = self.queue
    let error = thrown(WaitTimeoutError.self) {
      try runCoroutine(on: queue, timeout: 0.01) { try CoPromise<Void>().await() }
    }
    #expect(error?.line == #line - 2)
    #expect(error?.file == #filePath)
  }

  @Test func expectNoPendingPromisesNamesTheCallersLine() {
    let promise = Promise<Int>.pending()
    defer { promise.fulfill(0) }
    let line = #line + 1
    let error = thrown(WaitTimeoutError.self) { try expectNoPendingPromises(timeout: 0.01) }
    #expect(error?.line == line)
  }

  @Test func expectNoSuspendedCoroutinesNamesTheCallersLine() throws {
    let promise = CoPromise<Int>()
    let checkpoint = CoroutineSnapshot.nextID
    queue.startCoroutine(name: "failure location") { _ = try promise.await() }
    let error = thrown(SuspendedCoroutinesError.self) {
      try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 0.05) {
        $0.name == "failure location"
      }
    }
    let line = #line - 4
    #expect(error?.line == line)
    #expect(error?.file == #filePath)
    #expect(error?.description.contains("(checked at \(#filePath):\(line))") == true)
    promise.success(1)
    try expectNoSuspendedCoroutines(startedSince: checkpoint, timeout: 5) {
      $0.name == "failure location"
    }
  }

  #if compiler(>=6.1)  // the trait needs Swift Testing's TestScoping (Swift 6.1)
    @Test func theTraitRecordsItsIssueAtTheTest() async throws {
      let promise = CoPromise<Int>()
      let trait = NoSuspendedCoroutinesTrait.noSuspendedCoroutines(timeout: 0.05) {
        $0.name == "trait location"
      }
      let test = try #require(Test.current)
      let testCase = try #require(Test.Case.current)
      let queue = self.queue
      try await withKnownIssue {
        try await trait.provideScope(for: test, testCase: testCase) {
          queue.startCoroutine(name: "trait location") { _ = try promise.await() }
        }
      } matching: { issue in
        issue.sourceLocation == test.sourceLocation
          && issue.comments.contains { $0.rawValue.contains("\"trait location\"") }
      }
      promise.success(0)
      try expectNoSuspendedCoroutines(timeout: 5) { $0.name == "trait location" }
    }
  #endif
}
