import CCoroutineContext
import Dispatch

/// A coroutine or generator as the registry visit read it, before descriptions are made (which
/// happens outside the registry's lock: describing a scheduler may run its code).
struct RawCoroutineRecord {
  var id: UInt64
  var isGenerator: Bool
  var name: String?
  var activity: UInt64
  var detail: UInt
  var waitFlags: UInt64 = 0
  var queue: UnsafeRetainedBits<DispatchQueue>?
  var schedulerObject: UnsafeRetainedBits<AnyObject>?
  var startFile: StaticString?
  var startLine: UInt32 = 0
  var scope: ObjectIdentifier?
  var stack: CoroutineInfo.Stack?
  var addresses: [UInt] = []
  /// Whether it has a fiber: a coroutine still "created" in the registry is in its first slice.
  var hasRun = false
  /// The timeout of the timed wait it is switched out in, in nanoseconds (`UInt64.max`:
  /// `.never`); `nil` if it is in none, or the coroutine moved on while it was being read.
  var timeout: UInt64?

  /// The registry's state bits (`COV_ACTIVITY_*`).
  var activityState: Int { Int(activity & 3) }
  /// The registry's wait kind, with `CoroutineWaitKind.timedFlag`.
  var rawWaitKind: UInt8 { UInt8(truncatingIfNeeded: (activity >> 2) & 0x3F) }
  /// When it switched out (`cov_registry_ticks`); a count of switch-outs for a generator.
  var stamp: UInt64 { activity >> 8 }

  /// What it is doing, as a snapshot reports it.
  var state: CoroutineInfo.State {
    switch activityState {
    case COV_ACTIVITY_CREATED: hasRun ? .running : .notStarted
    case COV_ACTIVITY_RUNNING: .running
    case COV_ACTIVITY_READY: .ready
    default: waitFlags & WaitState.woken != 0 ? .ready : .suspended
    }
  }

  /// Whether nothing can resume it (see `CoroutineInfo.isLeaked`).
  var isLeaked: Bool {
    waitFlags & WaitState.abandoned != 0 && waitFlags & WaitState.claimed == 0
      && state == .suspended
  }
}

/// What a coroutine tells a snapshot about itself (`CoroutineContext.debugFields()`), read
/// while the registry keeps it from finishing; the scheduler references are retained for the
/// snapshot.
struct CoroutineDebugFields {
  var queue: UnsafeRetainedBits<DispatchQueue>?
  var schedulerObject: UnsafeRetainedBits<AnyObject>?
  var fiber: OpaquePointer?
  var startFile: StaticString
  var startLine: UInt32
  var scope: ObjectIdentifier?
  var waitFlags: UInt64
}

extension CoroutineContext {
  /// The timeout of the timed wait the coroutine is switched out in, in nanoseconds, for a
  /// snapshot that read the coroutine's activity (acquiring) as switched out in a timed wait.
  /// Reading the entry is safe then: every timed wait makes the entry before it switches out
  /// (`armTimer`), and it is never replaced, so the read follows its only write.
  func timedWaitTimeout() -> UInt64? {
    timerEntry?.timeoutForSnapshots.load(ordering: .relaxed)
  }
}

/// The registry visit's state (see `CoroutineSnapshot.take`), in one of two modes: every
/// coroutine's record (a snapshot), or only one record per group of coroutines that print as one
/// entry of a dump (`CoroutineSnapshot.writeDump`), so that a dump of a million alike coroutines
/// holds a few records, not a million.
final class SnapshotCollector {
  let backtraces: Bool
  var records: [RawCoroutineRecord] = []
  /// In the grouping mode: the groups so far, and where each key's group is.
  var groups: [RawGroup]?
  var groupIndex: [RawGroupKey: Int] = [:]
  /// High-water marks of shared stacks, measured once per stack (by its lowest address).
  var sharedHighWater: [UInt: Int] = [:]
  let addressBuffer = UnsafeMutablePointer<UInt>.allocate(capacity: SnapshotCollector.maxFrames)
  static let maxFrames = 64

  init(backtraces: Bool, grouping: Bool = false) {
    self.backtraces = backtraces
    if grouping { groups = [] }
  }

  deinit { addressBuffer.deallocate() }

  /// Visits every registered coroutine and generator (`cov_registry_visit`).
  func visitRegistry() {
    withExtendedLifetime(self) {
      cov_registry_visit(
        { context, entry, object in
          Unmanaged<SnapshotCollector>.fromOpaque(context!).takeUnretainedValue()
            .visit(entry!, object: object)
        }, Unmanaged.passUnretained(self).toOpaque())
    }
  }

  /// One registered coroutine or generator (under the registry's lock for its chunk).
  func visit(_ entry: UnsafeMutablePointer<cov_registry_entry_t>, object: UInt) {
    let activity = cov_registry_entry_activity(entry)
    var record = RawCoroutineRecord(
      id: cov_registry_entry_id(entry), isGenerator: object & UInt(COV_REGISTRY_GENERATOR) != 0,
      activity: activity, detail: 0)
    if object & UInt(COV_REGISTRY_NAMED) != 0 {
      record.name = CoroutineRegistry.names.withCriticalSection { $0[record.id] }
    }
    let address = UnsafeRawPointer(bitPattern: object & ~UInt(COV_REGISTRY_TAGS))!
    let state = record.activityState
    let switchedOut = state == COV_ACTIVITY_SUSPENDED || state == COV_ACTIVITY_READY
    let fiber: OpaquePointer?
    if record.isGenerator {
      let registration = GeneratorRegistration.snapshotFields(at: address)
      fiber = registration.fiber
      record.startFile = registration.startFile
      record.startLine = registration.startLine
    } else {
      let context = Unmanaged<CoroutineContext>.fromOpaque(address)
      let fields = context._withUnsafeGuaranteedRef { $0.debugFields() }
      fiber = fields.fiber
      record.queue = fields.queue
      record.schedulerObject = fields.schedulerObject
      record.startFile = fields.startFile
      record.startLine = fields.startLine
      record.scope = fields.scope
      record.waitFlags = fields.waitFlags
      if switchedOut && record.rawWaitKind & CoroutineWaitKind.timedFlag != 0 {
        let timeout = context._withUnsafeGuaranteedRef { $0.timedWaitTimeout() }
        // Kept only if it is still that wait's: the coroutine was not resumed meanwhile.
        if cov_registry_entry_activity_again(entry) == activity { record.timeout = timeout }
      }
    }
    record.hasRun = fiber != nil
    record.detail = fiber.map(cov_fiber_wait_detail) ?? 0
    if let fiber {
      var info = cov_fiber_stack_info_t()
      cov_fiber_stack_info(fiber, &info, 0)
      var inUse: Int?
      if backtraces && switchedOut {
        var used = 0
        let count = cov_fiber_backtrace(fiber, addressBuffer, Self.maxFrames, &used)
        // A coroutine resumed meanwhile may have changed the frames being read: keep them only
        // if its activity is still the one read before.
        if cov_registry_entry_activity_again(entry) == activity {
          record.addresses = Array(UnsafeBufferPointer(start: addressBuffer, count: count))
          inUse = used
        }
      }
      // One measurement per shared stack: many coroutines share each.
      var highWater: Int
      if info.shared != 0, let known = sharedHighWater[info.low] {
        highWater = known
      } else {
        cov_fiber_stack_info(fiber, &info, 1)
        highWater = info.high_water
        if info.shared != 0 { sharedHighWater[info.low] = highWater }
      }
      if info.size > 0 {
        record.stack = CoroutineInfo.Stack(
          mode: info.shared != 0 ? .shared : .dedicated, size: info.size, inUse: inUse,
          highWaterMark: highWater > 0 ? highWater : nil)
      }
    }
    if groups != nil { group(record) } else { records.append(record) }
  }

  // MARK: - Grouping

  /// What makes coroutines alike as the registry recorded them: a finer `CoroutineDumpKey`
  /// (which compares descriptions: two queues with one label are alike there, not here).
  struct RawGroupKey: Hashable {
    let isGenerator: Bool
    let name: String?
    let state: CoroutineInfo.State
    let waitKind: UInt8
    /// The wait's type; 0 for a delay (whose detail, its deadline, differs).
    let waitDetail: UInt
    let leaked: Bool
    let addresses: [UInt]
    let startFile: UInt
    let startLine: UInt32
    let queue: UInt
    let schedulerObject: UInt

    init(_ record: RawCoroutineRecord) {
      isGenerator = record.isGenerator
      name = record.name
      state = record.state
      waitKind = record.rawWaitKind
      let kind = waitKind & ~CoroutineWaitKind.timedFlag
      waitDetail = kind == CoroutineWaitKind.delay.rawValue ? 0 : record.detail
      leaked = record.isLeaked
      addresses = record.addresses
      // A start file is a literal: its address names it (a scalar, never an address, otherwise).
      startFile =
        record.startFile.map {
          $0.hasPointerRepresentation
            ? UInt(bitPattern: $0.utf8Start) : UInt($0.unicodeScalar.value)
        } ?? 0
      startLine = record.startLine
      queue = record.queue.map { $0.untagged.unsafeWord } ?? 0
      schedulerObject = record.schedulerObject.map { $0.untagged.unsafeWord } ?? 0
    }
  }

  /// Alike coroutines, in bounded memory: the record of the one with the smallest id (which
  /// holds the group's references to its scheduler), the one that has waited longest (whose
  /// scheduler references are the same objects, not held again), and a summary of the ids.
  struct RawGroup {
    var first: RawCoroutineRecord
    var longest: RawCoroutineRecord
    var ids: CoroutineIDSummary
  }

  /// Adds `record` to its group (under the registry's lock for its chunk).
  private func group(_ record: RawCoroutineRecord) {
    let key = RawGroupKey(record)
    guard let index = groupIndex[key] else {
      groupIndex[key] = groups!.count
      groups!.append(RawGroup(first: record, longest: record, ids: CoroutineIDSummary(record.id)))
      return
    }
    // Its scheduler is the group's (the key says so), which the group holds already: giving the
    // record's own references back now never releases the last one.
    record.queue?.release()
    record.schedulerObject?.release()
    groups![index].ids.add(record.id)
    if record.id < groups![index].first.id { groups![index].first = record }
    if Self.waitedLonger(record, than: groups![index].longest) {
      groups![index].longest = record
    }
  }

  private static func waitedLonger(_ one: RawCoroutineRecord, than other: RawCoroutineRecord)
    -> Bool
  {
    guard one.stamp != 0, !one.isGenerator else { return false }
    return other.stamp == 0 || one.stamp < other.stamp
  }

  // MARK: - Finishing

  /// Turns the records into `CoroutineInfo`s (descriptions, symbols), outside any lock, and
  /// releases what the visit retained.
  func finish() -> [CoroutineInfo] {
    let convert = RecordConversion()
    let infos = records.map(convert.info)
    releaseReferences(of: records)
    records = []
    return infos.sorted { $0.id < $1.id }
  }

  /// The grouping mode's `finish`: one dump group per group of records, by smallest id.
  func finishGroups() -> [CoroutineDumpGroup] {
    let convert = RecordConversion()
    let result = (groups ?? []).map { group -> CoroutineDumpGroup in
      var longest = group.longest
      longest.addresses = []  // only its status is shown
      return CoroutineDumpGroup(
        first: convert.info(group.first), longest: convert.info(longest), ids: group.ids)
    }
    releaseReferences(of: (groups ?? []).map(\.first))
    groups = []
    groupIndex = [:]
    return result.sorted { $0.first.id < $1.first.id }
  }

  private func releaseReferences(of records: [RawCoroutineRecord]) {
    for record in records {
      record.queue?.release()
      record.schedulerObject?.release()
    }
  }
}

/// Makes `CoroutineInfo`s of records: one clock reading, each type, scheduler, file and return
/// address described once, and one array of frames for all the coroutines with the same stack
/// (thousands of connections parked in one read hold one backtrace between them).
private final class RecordConversion {
  let ticksPerSecond = cov_registry_ticks_per_second()
  let nowTicks = cov_registry_ticks()
  let symbols = SymbolCache()
  let descriptions = CoroutineSnapshotDescriptions()
  var backtraces: [[UInt]: [CoroutineInfo.Frame]] = [:]

  func backtrace(_ addresses: [UInt]) -> [CoroutineInfo.Frame] {
    if addresses.isEmpty { return [] }
    if let known = backtraces[addresses] { return known }
    let frames = addresses.map(symbols.frame)
    backtraces[addresses] = frames
    return frames
  }

  func info(_ record: RawCoroutineRecord) -> CoroutineInfo {
    let rawKind = record.rawWaitKind
    let state = record.state
    var wait = descriptions.wait(
      kind: CoroutineWaitKind(rawValue: rawKind & ~CoroutineWaitKind.timedFlag) ?? .none,
      detail: record.detail)
    if state == .running || state == .notStarted { wait = nil }
    var waitingSeconds: Double?
    // A generator's stamp counts its switch-outs: no time.
    if (state == .suspended || state == .ready) && record.stamp != 0 && !record.isGenerator {
      let elapsed = (nowTicks &- record.stamp) & ((1 << 56) - 1)
      waitingSeconds = Double(elapsed) / ticksPerSecond
    }
    let timeout = record.timeout.flatMap { $0 == .max ? nil : Double($0) / 1e9 }
    return CoroutineInfo(
      id: record.id, name: record.name, kind: record.isGenerator ? .generator : .coroutine,
      state: state, wait: wait,
      waitHasTimeout: rawKind & CoroutineWaitKind.timedFlag != 0 && wait != nil,
      timeoutSeconds: wait == nil ? nil : timeout,
      waitingSeconds: waitingSeconds, isLeaked: record.isLeaked,
      scheduler: record.isGenerator ? nil : descriptions.scheduler(record),
      startFile: descriptions.file(record.startFile, line: record.startLine),
      startLine: Int(record.startLine), scope: record.scope, stack: record.stack,
      backtrace: backtrace(record.addresses))
  }
}
