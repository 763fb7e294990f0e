import CCoroutineContext
import Dispatch

/// Every live coroutine and generator of the process, taken while the program runs: an
/// in-process view like Go's goroutine dump or Kotlin's `DebugProbes.dumpCoroutines()`.
///
/// ```swift
/// let snapshot = CoroutineSnapshot.take()
/// print(snapshot.dump())                       // grouped, Go-style text
/// let stuck = snapshot.coroutines.filter { $0.state == .suspended && ($0.waitingSeconds ?? 0) > 60 }
/// ```
///
/// Taking a snapshot stops nobody: coroutines keep running, suspending and resuming while it is
/// taken (each one is read consistently on its own; the snapshot as a whole is not an instant).
/// A coroutine that finishes while its part of the registry is being read waits for that part
/// to be read (a few milliseconds for thousands of coroutines); nothing else waits. With no
/// snapshot requested, the registry costs no allocation and a few stores per suspension.
///
/// For a running server, ``installDumpSignal(_:)`` writes a dump to standard error on a
/// signal (`kill -USR1 <pid>`); the Debugging article shows the output.
public struct CoroutineSnapshot: Sendable, CustomStringConvertible {
  /// The coroutines and generators, by id (start order).
  public let coroutines: [CoroutineInfo]
  /// How many coroutines run unlisted because the registry was full (67 million at once).
  public let unlisted: UInt64
  /// When the snapshot was taken.
  public let takenAt: DispatchTime

  /// Takes a snapshot of every live coroutine and generator.
  ///
  /// - Parameter backtraces: whether to walk and symbolicate the frames of switched-out
  ///   coroutines (the costly part, though still under a second for 100,000 of them).
  public static func take(backtraces: Bool = true) -> CoroutineSnapshot {
    let collector = SnapshotCollector(backtraces: backtraces)
    collector.visitRegistry()
    return CoroutineSnapshot(
      coroutines: collector.finish(), unlisted: cov_registry_overflow_count(), takenAt: .now())
  }

  /// How many coroutines and generators are alive now — those a snapshot would list — counted
  /// without taking one: for a `STATS` command, a metrics gauge, a health check.
  ///
  /// ```swift
  /// let live = CoroutineSnapshot.liveCount    // e.g. "connected_clients" in an INFO reply
  /// ```
  ///
  /// It reads the registry's table (24 bytes per entry, one entry for each coroutine that was
  /// alive at the busiest moment so far), writing nothing and taking no lock while it reads: the
  /// program's coroutines pay nothing for it, whether it is called or not, and a call costs
  /// microseconds for tens of thousands of coroutines (see the Debugging article).
  ///
  /// Precision: coroutines alive during the whole call are counted once each; those that start
  /// or finish while it counts may or may not be. So with no coroutine starting or finishing
  /// meanwhile the count is exact, and otherwise it is off by at most the number that started
  /// or finished during the call. Coroutines started while the registry was full (see
  /// ``unlisted``) are not counted.
  public static var liveCount: Int { Int(cov_registry_live_count()) }

  /// The id the next coroutine or generator to start will get: those started before have
  /// smaller ids (a checkpoint, for "coroutines started since").
  public static var nextID: UInt64 { cov_registry_next_id() }

  /// The coroutines that are suspended or ready (switched out, waiting for something).
  public var waiting: [CoroutineInfo] {
    coroutines.filter { $0.state == .suspended || $0.state == .ready }
  }

  /// The coroutines that nothing can resume (see ``CoroutineInfo/isLeaked``).
  public var leaked: [CoroutineInfo] { coroutines.filter(\.isLeaked) }

  /// The same snapshot with only the coroutines `isIncluded` accepts (to dump a part of it).
  ///
  /// ```swift
  /// let mine = CoroutineSnapshot.take().filter { $0.startFile?.hasPrefix("Server/") == true }
  /// print(mine.dump())
  /// ```
  public func filter(_ isIncluded: (CoroutineInfo) throws -> Bool) rethrows -> CoroutineSnapshot {
    CoroutineSnapshot(
      coroutines: try coroutines.filter(isIncluded), unlisted: unlisted, takenAt: takenAt)
  }

  /// The dump (``dump(groupingIdenticalStacks:)``, grouped).
  public var description: String { dump() }
}
