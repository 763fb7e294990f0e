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
  /// 10000 coroutines [awaiting Promise<Int>, 3 s]: ids 18…10017
  ///     …
  /// ```
  ///
  /// Frames inside Covenant at either end of a backtrace (the switch, the await's machinery,
  /// the coroutine's entry) are folded into one line each.
  ///
  /// - Parameter groupingIdenticalStacks: print coroutines that are alike — same state, wait,
  ///   frames, start site and scheduler, no name — once, with their count and ids.
  public func dump(groupingIdenticalStacks: Bool = true) -> String {
    var counts: [CoroutineInfo.State: Int] = [:]
    for coroutine in coroutines { counts[coroutine.state, default: 0] += 1 }
    let states: [CoroutineInfo.State] = [.suspended, .ready, .running, .notStarted]
    let summary = states.compactMap { state in counts[state].map { "\($0) \(state)" } }
    var text = "Covenant coroutine dump: \(coroutines.count) coroutines and generators"
    text += summary.isEmpty ? "\n" : " (\(summary.joined(separator: ", ")))\n"
    if unlisted > 0 { text += "(\(unlisted) started unlisted: the registry was full)\n" }

    var groups: [GroupKey: Int] = [:]
    var ordered: [[CoroutineInfo]] = []
    for coroutine in coroutines {
      guard groupingIdenticalStacks, coroutine.name == nil else {
        ordered.append([coroutine])
        continue
      }
      let key = GroupKey(coroutine)
      if let index = groups[key] {
        ordered[index].append(coroutine)
      } else {
        groups[key] = ordered.count
        ordered.append([coroutine])
      }
    }
    for group in ordered { text += "\n" + Self.render(group) }
    return text
  }

  /// What makes coroutines alike in a dump.
  private struct GroupKey: Hashable {
    let kind: CoroutineInfo.Kind
    let state: CoroutineInfo.State
    let wait: String?
    let timed: Bool
    let leaked: Bool
    let frames: [UInt]
    let start: String
    let scheduler: String?

    init(_ coroutine: CoroutineInfo) {
      kind = coroutine.kind
      state = coroutine.state
      // Delays that differ only by deadline are alike.
      if case .delay = coroutine.wait { wait = "delay" } else { wait = coroutine.wait?.description }
      timed = coroutine.waitHasTimeout
      leaked = coroutine.isLeaked
      frames = coroutine.backtrace.map(\.address)
      start = coroutine.startSite
      scheduler = coroutine.scheduler
    }
  }

  private static func render(_ group: [CoroutineInfo]) -> String {
    let first = group[0]
    var text: String
    if group.count == 1 {
      text = first.kind == .generator ? "generator \(first.id)" : "coroutine \(first.id)"
      if let name = first.name { text += " \"\(name)\"" }
      text += " [\(first.statusText)]:\n"
    } else {
      let longest = group.max { ($0.waitingSeconds ?? 0) < ($1.waitingSeconds ?? 0) }!
      let noun = first.kind == .generator ? "generators" : "coroutines"
      text = "\(group.count) \(noun) [\(longest.statusText)]: ids \(idList(group))\n"
    }
    for line in frameLines(first.backtrace) { text += "    \(line)\n" }
    text += "  started at \(first.startSite)"
    if let scheduler = first.scheduler { text += " on \(scheduler)" }
    if let stack = first.stack { text += "; \(describe(stack))" }
    return text + "\n"
  }

  /// Frames with compiler-made thunks left out, and Covenant's own at either end folded.
  private static func frameLines(_ frames: [CoroutineInfo.Frame]) -> [String] {
    var shown: [CoroutineInfo.Frame] = []
    for frame in frames where !isThunk(frame, after: shown.last) { shown.append(frame) }
    guard !shown.isEmpty else { return [] }
    let leading = shown.prefix(while: isLibrary).count
    let trailing = shown.dropFirst(leading).reversed().prefix(while: isLibrary).count
    var lines: [String] = []
    if leading > 0 { lines.append("… \(leading) frame\(leading == 1 ? "" : "s") in Covenant") }
    lines += shown.dropFirst(leading).dropLast(trailing).map(\.description)
    if trailing > 0 { lines.append("… \(trailing) frame\(trailing == 1 ? "" : "s") in Covenant") }
    return lines
  }

  /// Glue the compiler makes between a closure and its caller, which says nothing to a reader:
  /// reabstraction thunks, and a closure's forwarder right after the closure itself (alone, in
  /// an optimized build, the forwarder is where the closure's code went: it stays).
  static func isThunk(_ frame: CoroutineInfo.Frame, after inner: CoroutineInfo.Frame?) -> Bool {
    guard var symbol = frame.symbol?[...] else { return false }
    let forwarder = "partial apply forwarder for "
    let isForwarder = symbol.hasPrefix(forwarder)
    if isForwarder { symbol = symbol.dropFirst(forwarder.count) }
    if symbol.hasPrefix("reabstraction thunk") || symbol.hasPrefix("thunk for")
      || symbol.hasPrefix("@objc ")
    {
      return true
    }
    return isForwarder && inner?.symbol.map { $0[...] == symbol } == true
  }

  /// Covenant's own frames: the switch and the fiber's entry (C), the await machinery (Swift:
  /// functions of the CovenantCore module, and their specializations).
  static func isLibrary(_ frame: CoroutineInfo.Frame) -> Bool {
    if frame.module == "CovenantCore" { return true }
    guard let symbol = frame.symbol, frame.module == nil else { return false }
    return symbol.hasPrefix("cov_") || symbol == "fiber_main"
  }

  private static func idList(_ group: [CoroutineInfo]) -> String {
    let ids = group.map(\.id)
    if ids.count > 2, ids.last! - ids.first! == UInt64(ids.count - 1) {
      return "\(ids.first!)…\(ids.last!)"
    }
    let shown = ids.prefix(8).map(String.init).joined(separator: ", ")
    return ids.count > 8 ? shown + ", … (\(ids.count - 8) more)" : shown
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
