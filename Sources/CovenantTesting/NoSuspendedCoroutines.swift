import Covenant
import Foundation

/// Thrown by `expectNoSuspendedCoroutines(startedSince:timeout:where:)`: coroutines that were
/// still alive, with their dump (what each waits for, since when, its frames and start site).
public struct SuspendedCoroutinesError: Error, CustomStringConvertible, Sendable {
  /// The coroutines (and generators) still alive when the check gave up.
  public let snapshot: CoroutineSnapshot
  /// How long the check waited for them to finish, in seconds.
  public let timeout: TimeInterval
  /// The file of the check that failed (`#filePath` form): the test's, as a thrown error is
  /// reported where the test is, not on the line of the check.
  public let file: String
  /// The line of the check that failed.
  public let line: Int

  /// The coroutines still alive.
  public var coroutines: [CoroutineInfo] { snapshot.coroutines }

  /// Those that nothing can ever resume (`CoroutineInfo.isLeaked`).
  public var leaked: [CoroutineInfo] { snapshot.leaked }

  /// A summary, then the coroutines' dump.
  public var description: String {
    let leakedCount = leaked.count
    var text = "CovenantTesting: \(coroutines.count) coroutine(s) still alive after \(timeout) s"
    if leakedCount > 0 { text += ", \(leakedCount) of them leaked (nothing can resume them)" }
    return text + " (checked at \(file):\(line))\n" + snapshot.dump()
  }
}

/// Checks that coroutines (and generators) have all finished: waits up to `timeout` seconds
/// (running the current run loop meanwhile, as the other waiting helpers do) until none of
/// those started since `checkpoint` and accepted by `include` is alive, and otherwise throws
/// their dump.
///
/// A coroutine left suspended at the end of a test is usually a bug: an await whose promise
/// nobody resolves, a channel nobody closes, a callback released uncalled (reported as
/// *leaked*). Framework-neutral: call it at the end of a test, from XCTest or Swift Testing.
///
/// ```swift
/// func testRefresh() throws {
///   let checkpoint = CoroutineSnapshot.nextID
///   model.refresh()
///   XCTAssertEqual(try wait(for: model.loaded), 3)
///   try expectNoSuspendedCoroutines(startedSince: checkpoint)
/// }
/// ```
///
/// The check is process-wide: with tests running in parallel (Swift Testing's default), other
/// tests' coroutines started after `checkpoint` count too; use it in serialized suites, or
/// narrow it with `include` (coroutine names, start files).
///
/// - Parameters:
///   - checkpoint: only coroutines with an id at least this (`CoroutineSnapshot.nextID` taken
///     before the code under test) count; 0, the default, counts every coroutine.
///   - timeout: how long to give them to finish, in seconds.
///   - include: which coroutines count (all by default).
///   - file: the file of the check, named by the error (the caller's by default).
///   - line: the line of the check, named by the error (the caller's by default).
/// - Throws: `SuspendedCoroutinesError` with the coroutines still alive after `timeout`.
public func expectNoSuspendedCoroutines(
  startedSince checkpoint: UInt64 = 0, timeout: TimeInterval = 1,
  where include: (CoroutineInfo) -> Bool = { _ in true }, file: StaticString = #filePath,
  line: UInt = #line
) throws {
  let deadline = Date(timeIntervalSinceNow: max(0, timeout))
  if spinRunLoop(until: deadline, { alive(since: checkpoint, include).isEmpty }) { return }
  try report(
    Set(alive(since: checkpoint, include).map(\.id)), timeout: timeout, file: "\(file)",
    line: Int(line))
}

/// `expectNoSuspendedCoroutines(startedSince:timeout:where:)` for async code (the Swift Testing
/// trait): it polls with `Task.sleep`, so the wait holds none of the cooperative pool's threads
/// (as many as the cores), which the coroutines' own work or other tests may need meanwhile.
/// - Throws: `SuspendedCoroutinesError`, or `CancellationError` if the task is cancelled.
func awaitNoSuspendedCoroutines(
  startedSince checkpoint: UInt64, timeout: TimeInterval,
  where include: (CoroutineInfo) -> Bool, file: String, line: Int
) async throws {
  let deadline = Date(timeIntervalSinceNow: max(0, timeout))
  while !alive(since: checkpoint, include).isEmpty {
    let left = deadline.timeIntervalSinceNow
    if left <= 0 {
      try report(
        Set(alive(since: checkpoint, include).map(\.id)), timeout: timeout, file: file, line: line)
      return
    }
    // The blocking check's step (2 ms), so both notice a finish as soon.
    try await Task.sleep(nanoseconds: UInt64(min(left, 0.002) * 1_000_000_000))
  }
}

/// The coroutines started since `checkpoint` that `include` accepts and that are still alive
/// (a snapshot without backtraces: the cheap one, taken at every step of the wait).
private func alive(
  since checkpoint: UInt64, _ include: (CoroutineInfo) -> Bool
) -> [CoroutineInfo] {
  CoroutineSnapshot.take(backtraces: false).coroutines.filter {
    $0.id >= checkpoint && include($0)
  }
}

/// Throws the dump of the coroutines of `remaining` that are still alive.
private func report(
  _ remaining: Set<UInt64>, timeout: TimeInterval, file: String, line: Int
) throws {
  guard !remaining.isEmpty else { return }
  let detailed = CoroutineSnapshot.take().filter { remaining.contains($0.id) }
  if detailed.coroutines.isEmpty { return }  // finished meanwhile
  throw SuspendedCoroutinesError(snapshot: detailed, timeout: timeout, file: file, line: line)
}

#if canImport(XCTest)
  import XCTest

  extension XCTestCase {
    /// Fails the test if coroutines started since `checkpoint` are still alive after `timeout`
    /// seconds, with their dump; see `expectNoSuspendedCoroutines(startedSince:timeout:where:)`.
    ///
    /// ```swift
    /// override func setUp() { checkpoint = CoroutineSnapshot.nextID }
    /// override func tearDown() { assertNoSuspendedCoroutines(startedSince: checkpoint) }
    /// ```
    public func assertNoSuspendedCoroutines(
      startedSince checkpoint: UInt64 = 0, timeout: TimeInterval = 1,
      where include: (CoroutineInfo) -> Bool = { _ in true },
      file: StaticString = #filePath, line: UInt = #line
    ) {
      do {
        try expectNoSuspendedCoroutines(
          startedSince: checkpoint, timeout: timeout, where: include, file: file, line: line)
      } catch {
        XCTFail("\(error)", file: file, line: line)
      }
    }
  }
#endif
