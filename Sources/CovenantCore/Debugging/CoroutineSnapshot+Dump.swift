import CCoroutineContext

extension CoroutineSnapshot {
  /// The snapshot as text, in the spirit of Go's goroutine dump: a heading per coroutine with
  /// its state, what it waits for and for how long, its frames (innermost first), and where it
  /// was started and runs.
  ///
  /// ```text
  /// coroutine 17 "fetcher" [awaiting CoFuture<Int>, 2 min]:
  ///     CovenantExample.fetchUser(id: Swift.Int) throws -> CovenantExample.User + 92 (CovenantExample)
  ///     closure #1 @Sendable () throws -> () in CovenantExample.startFetchers() -> () + 55 (CovenantExample)
  ///   started at CovenantExample/main.swift:13 on queue "server"; shared stack 256 KiB, 1,104 B in use
  ///
  /// 10000 coroutines "connection" [receiving from CoChannel<String>, 3 s]: ids 18…10017
  ///     …
  ///
  /// 3 coroutines [awaiting CoFuture<Data>, 42 s left of a 1 min timeout, 18 s]: ids 10020, 10024, 10031
  ///     …
  /// ```
  ///
  /// Frames inside Covenant at either end of a backtrace (the switch, the await's machinery,
  /// the coroutine's entry) are folded into one line each.
  ///
  /// - Parameter groupingIdenticalStacks: print coroutines that are alike — same kind, name (or
  ///   none), state, wait, frames, start site and scheduler — once, with their count and ids.
  public func dump(groupingIdenticalStacks: Bool = true) -> String {
    let groups =
      groupingIdenticalStacks
      ? CoroutineDumpGroup.grouping(coroutines) : coroutines.map(CoroutineDumpGroup.init)
    var text = ""
    Self.writeDump(groups: groups, unlisted: unlisted) { text += $0 }
    return text
  }

  /// Writes the grouped dump of every live coroutine and generator to `fileDescriptor`
  /// (standard error by default) without keeping a snapshot: what the dump signal
  /// (``installDumpSignal(_:)``) writes, for a server's own trigger (an admin command).
  ///
  /// ```swift
  /// CoroutineSnapshot.writeDump()                  // to standard error
  /// ```
  ///
  /// Its memory does not grow with the number of coroutines, only with the number of entries
  /// the dump prints: while it reads the registry it keeps one record per group of alike
  /// coroutines, and it writes the text in pieces of 64 KiB as it goes. (A snapshot, by
  /// contrast, holds every coroutine's ``CoroutineInfo``.) Errors writing to the descriptor end
  /// the dump early, silently.
  public static func writeDump(to fileDescriptor: Int32 = 2) {
    let collector = SnapshotCollector(backtraces: true, grouping: true)
    collector.visitRegistry()
    let groups = CoroutineDumpGroup.merged(collector.finishGroups())
    var pending = ""
    writeDump(groups: groups, unlisted: cov_registry_overflow_count()) { text in
      pending += text
      if pending.utf8.count >= 1 << 16 {
        writeAll(pending, toFileDescriptor: fileDescriptor)
        pending = ""
      }
    }
    writeAll(pending + "\n", toFileDescriptor: fileDescriptor)
  }

  /// The dump's text, in pieces: a summary, then an entry per group.
  private static func writeDump(
    groups: [CoroutineDumpGroup], unlisted: UInt64, _ write: (String) -> Void
  ) {
    var counts: [CoroutineInfo.State: Int] = [:]
    for group in groups { counts[group.first.state, default: 0] += group.count }
    let total = groups.reduce(0) { $0 + $1.count }
    let states: [CoroutineInfo.State] = [.suspended, .ready, .running, .notStarted]
    let summary = states.compactMap { state in counts[state].map { "\($0) \(state)" } }
    var text = "Covenant coroutine dump: \(total) coroutines and generators"
    text += summary.isEmpty ? "\n" : " (\(summary.joined(separator: ", ")))\n"
    if unlisted > 0 { text += "(\(unlisted) started unlisted: the registry was full)\n" }
    write(text)
    for group in groups { write("\n" + render(group)) }
  }

  private static func render(_ group: CoroutineDumpGroup) -> String {
    let first = group.first
    let name = first.name.map { " \"\($0)\"" } ?? ""
    var text: String
    if group.count == 1 {
      text = first.kind == .generator ? "generator \(first.id)" : "coroutine \(first.id)"
      text += "\(name) [\(first.statusText)]:\n"
    } else {
      let noun = first.kind == .generator ? "generators" : "coroutines"
      text = "\(group.count) \(noun)\(name) [\(group.longest.statusText)]: ids \(group.ids.text)\n"
    }
    for line in CoroutineDumpFrames.lines(first.backtrace) { text += "    \(line)\n" }
    text += "  started at \(first.startSite)"
    if let scheduler = first.scheduler { text += " on \(scheduler)" }
    if let stack = first.stack { text += "; \(describe(stack))" }
    return text + "\n"
  }

  private static func describe(_ stack: CoroutineInfo.Stack) -> String {
    var text = "\(stack.mode == .shared ? "shared" : "dedicated") stack \(bytes(stack.size))"
    if let inUse = stack.inUse { text += ", \(bytes(inUse)) in use" }
    if let highWater = stack.highWaterMark { text += ", high-water \(bytes(highWater))" }
    return text
  }

  private static func bytes(_ count: Int) -> String {
    if count >= 1 << 20, count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
    if count >= 1 << 10, count % (1 << 10) == 0 { return "\(count >> 10) KiB" }
    return "\(count) B"
  }
}
