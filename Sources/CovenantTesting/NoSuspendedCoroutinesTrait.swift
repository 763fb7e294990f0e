#if canImport(Testing) && compiler(>=6.1)
  import Covenant
  import Foundation
  import Testing

  /// A Swift Testing trait that records an issue when a test leaves coroutines alive: after the
  /// test, `expectNoSuspendedCoroutines(startedSince:timeout:where:)` for the coroutines started
  /// while it ran, with their dump in the issue.
  ///
  /// ```swift
  /// @Test(.noSuspendedCoroutines) func refreshFinishesEverything() throws {
  ///   try wait(for: model.refresh())
  /// }
  ///
  /// @Suite(.serialized, .noSuspendedCoroutines) struct CacheTests { … }   // every test
  /// ```
  ///
  /// The check is process-wide: coroutines that tests running at the same time start count
  /// too. Put it on serialized suites, or narrow it with `include`.
  public struct NoSuspendedCoroutinesTrait: TestTrait, SuiteTrait, TestScoping {
    /// How long a test's coroutines get to finish after it, in seconds.
    public let timeout: TimeInterval
    /// Which coroutines count.
    public let include: @Sendable (CoroutineInfo) -> Bool

    /// On a suite, the check applies to each of its tests.
    public var isRecursive: Bool { true }

    /// Runs the test, then checks its coroutines (waiting with `Task.sleep`, not blocking one
    /// of the threads the tests run on); an issue is recorded at the test's own source location.
    public func provideScope(
      for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
      guard testCase != nil else { return try await function() }
      let checkpoint = CoroutineSnapshot.nextID
      try await function()
      // The issue goes to the test's own line, not to this file's.
      let location = test.sourceLocation
      #if compiler(>=6.3)
        let file = location.filePath
      #else
        let file = location._filePath  // renamed `filePath` in Swift 6.3
      #endif
      do {
        try await awaitNoSuspendedCoroutines(
          startedSince: checkpoint, timeout: timeout, where: include, file: file,
          line: location.line)
      } catch let error as SuspendedCoroutinesError {
        Issue.record(Comment(rawValue: "\(error)"), sourceLocation: location)
      }
    }
  }

  extension Trait where Self == NoSuspendedCoroutinesTrait {
    /// Fails a test that leaves coroutines alive (given one second to finish).
    public static var noSuspendedCoroutines: Self { noSuspendedCoroutines() }

    /// Fails a test that leaves coroutines alive (given `timeout` seconds to finish), counting
    /// those `include` accepts.
    public static func noSuspendedCoroutines(
      timeout: TimeInterval = 1,
      where include: @escaping @Sendable (CoroutineInfo) -> Bool = { _ in true }
    ) -> Self {
      NoSuspendedCoroutinesTrait(timeout: timeout, include: include)
    }
  }
#endif
