/// Coroutines that print as one entry of a dump, gathered one at a time in memory that does not
/// grow with their number: the member with the smallest id (whose frames, start site, scheduler
/// and stack are shown), the member that has waited longest (whose status is shown: the wait,
/// its time, what is left of a timeout) and a summary of the ids.
struct CoroutineDumpGroup {
  private(set) var first: CoroutineInfo
  private(set) var longest: CoroutineInfo
  private(set) var ids: CoroutineIDSummary

  init(first: CoroutineInfo, longest: CoroutineInfo, ids: CoroutineIDSummary) {
    self.first = first
    self.longest = longest
    self.ids = ids
  }

  /// A group of one.
  init(_ coroutine: CoroutineInfo) {
    self.init(first: coroutine, longest: coroutine, ids: CoroutineIDSummary(coroutine.id))
  }

  var count: Int { ids.count }

  /// Adds `coroutine`, which is alike.
  mutating func add(_ coroutine: CoroutineInfo) {
    if coroutine.id < first.id { first = coroutine }
    if (coroutine.waitingSeconds ?? 0) > (longest.waitingSeconds ?? 0) { longest = coroutine }
    ids.add(coroutine.id)
  }

  /// Adds the members of `other`, a group of alike coroutines.
  mutating func merge(_ other: CoroutineDumpGroup) {
    if other.first.id < first.id { first = other.first }
    if (other.longest.waitingSeconds ?? 0) > (longest.waitingSeconds ?? 0) {
      longest = other.longest
    }
    ids.merge(other.ids)
  }

  /// The coroutines in groups of alike ones (same `CoroutineDumpKey`), by smallest id.
  static func grouping(_ coroutines: [CoroutineInfo]) -> [CoroutineDumpGroup] {
    var index: [CoroutineDumpKey: Int] = [:]
    var groups: [CoroutineDumpGroup] = []
    // Each distinct backtrace's lines made once: thousands of coroutines share a few.
    var lines: [[UInt]: [String]] = [:]
    for coroutine in coroutines {
      let addresses = coroutine.backtrace.map(\.address)
      let frames =
        lines[addresses]
        ?? {
          let made = CoroutineDumpFrames.lines(coroutine.backtrace)
          lines[addresses] = made
          return made
        }()
      let key = CoroutineDumpKey(coroutine, frames: frames)
      if let known = index[key] {
        groups[known].add(coroutine)
      } else {
        index[key] = groups.count
        groups.append(CoroutineDumpGroup(coroutine))
      }
    }
    return groups.sorted { $0.first.id < $1.first.id }
  }

  /// Merges the groups whose coroutines are alike (same `CoroutineDumpKey`), by smallest id.
  static func merged(_ groups: [CoroutineDumpGroup]) -> [CoroutineDumpGroup] {
    var index: [CoroutineDumpKey: Int] = [:]
    var result: [CoroutineDumpGroup] = []
    for group in groups {
      let key = CoroutineDumpKey(
        group.first, frames: CoroutineDumpFrames.lines(group.first.backtrace))
      if let known = index[key] {
        result[known].merge(group)
      } else {
        index[key] = result.count
        result.append(group)
      }
    }
    return result.sorted { $0.first.id < $1.first.id }
  }
}

/// What makes coroutines alike in a dump (Go groups goroutines with identical stacks): kind,
/// name, state, wait, frames as the dump shows them (`CoroutineDumpFrames`), start site and
/// scheduler. Coroutines of one name that differ in any of the others are told apart; a name is
/// never grouped with another, or with none.
struct CoroutineDumpKey: Hashable {
  let kind: CoroutineInfo.Kind
  let name: String?
  let state: CoroutineInfo.State
  let wait: String?
  let timed: Bool
  let leaked: Bool
  let frames: [String]
  let start: String
  let scheduler: String?

  init(_ coroutine: CoroutineInfo, frames: [String]) {
    kind = coroutine.kind
    name = coroutine.name
    state = coroutine.state
    // Delays that differ only by deadline are alike.
    if case .delay = coroutine.wait { wait = "delay" } else { wait = coroutine.wait?.description }
    timed = coroutine.waitHasTimeout
    leaked = coroutine.isLeaked
    self.frames = frames
    start = coroutine.startSite
    scheduler = coroutine.scheduler
  }
}

/// The ids of a group of coroutines, in bounded memory: how many, the largest, and the smallest
/// few (those a dump prints).
struct CoroutineIDSummary {
  /// How many ids a dump prints before "… (N more)".
  static let shown = 8

  private(set) var count = 0
  /// The smallest ids, in order: at most `shown`.
  private(set) var lowest: [UInt64] = []
  private(set) var highest: UInt64 = 0

  init(_ id: UInt64) { add(id) }

  mutating func add(_ id: UInt64) {
    count += 1
    highest = Swift.max(highest, id)
    keep(id)
  }

  mutating func merge(_ other: CoroutineIDSummary) {
    count += other.count
    highest = Swift.max(highest, other.highest)
    for id in other.lowest { keep(id) }
  }

  private mutating func keep(_ id: UInt64) {
    guard lowest.count < Self.shown || id < lowest[lowest.count - 1] else { return }
    lowest.insert(id, at: lowest.firstIndex { $0 > id } ?? lowest.count)
    if lowest.count > Self.shown { lowest.removeLast() }
  }

  /// `18…10017` for more than two consecutive ids (ids are unique, so a range as wide as their
  /// count holds them all), else the smallest ones and how many more: `3, 7, 9, … (12 more)`.
  var text: String {
    if count > 2, highest - lowest[0] == UInt64(count - 1) { return "\(lowest[0])…\(highest)" }
    let shown = lowest.map(String.init).joined(separator: ", ")
    return count > lowest.count ? shown + ", … (\(count - lowest.count) more)" : shown
  }
}
