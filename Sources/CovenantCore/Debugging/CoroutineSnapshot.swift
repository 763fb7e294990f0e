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
    withExtendedLifetime(collector) {
      cov_registry_visit(
        { context, entry, object in
          Unmanaged<SnapshotCollector>.fromOpaque(context!).takeUnretainedValue()
            .visit(entry!, object: object)
        }, Unmanaged.passUnretained(collector).toOpaque())
    }
    return CoroutineSnapshot(
      coroutines: collector.finish(), unlisted: cov_registry_overflow_count(), takenAt: .now())
  }

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

/// The registry visit's state (see `CoroutineSnapshot.take`).
final class SnapshotCollector {
  let backtraces: Bool
  var records: [RawCoroutineRecord] = []
  /// High-water marks of shared stacks, measured once per stack (by its lowest address).
  var sharedHighWater: [UInt: Int] = [:]
  let addressBuffer = UnsafeMutablePointer<UInt>.allocate(capacity: SnapshotCollector.maxFrames)
  static let maxFrames = 64

  init(backtraces: Bool) { self.backtraces = backtraces }

  deinit { addressBuffer.deallocate() }

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
    let fiber: OpaquePointer?
    if record.isGenerator {
      let registration = GeneratorRegistration.snapshotFields(at: address)
      fiber = registration.fiber
      record.startFile = registration.startFile
      record.startLine = registration.startLine
    } else {
      let fields = Unmanaged<CoroutineContext>.fromOpaque(address)._withUnsafeGuaranteedRef {
        $0.debugFields()
      }
      fiber = fields.fiber
      record.queue = fields.queue
      record.schedulerObject = fields.schedulerObject
      record.startFile = fields.startFile
      record.startLine = fields.startLine
      record.scope = fields.scope
      record.waitFlags = fields.waitFlags
    }
    let state = Int(activity & 3)
    record.hasRun = fiber != nil
    record.detail = fiber.map(cov_fiber_wait_detail) ?? 0
    if let fiber {
      var info = cov_fiber_stack_info_t()
      cov_fiber_stack_info(fiber, &info, 0)
      var inUse: Int?
      if backtraces && (state == COV_ACTIVITY_SUSPENDED || state == COV_ACTIVITY_READY) {
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
    records.append(record)
  }

  /// Turns the records into `CoroutineInfo`s (descriptions, symbols), outside any lock, and
  /// releases what the visit retained.
  func finish() -> [CoroutineInfo] {
    let ticksPerSecond = cov_registry_ticks_per_second()
    let nowTicks = cov_registry_ticks()
    let symbols = SymbolCache()
    let descriptions = CoroutineSnapshotDescriptions()
    let infos = records.map { record -> CoroutineInfo in
      let state = Int(record.activity & 3)
      let rawKind = UInt8(truncatingIfNeeded: (record.activity >> 2) & 0x3F)
      let ticks = record.activity >> 8
      var wait = descriptions.wait(
        kind: CoroutineWaitKind(rawValue: rawKind & ~CoroutineWaitKind.timedFlag) ?? .none,
        detail: record.detail)
      let woken = record.waitFlags & WaitState.woken != 0
      let infoState: CoroutineInfo.State
      switch state {
      case COV_ACTIVITY_CREATED: infoState = record.hasRun ? .running : .notStarted
      case COV_ACTIVITY_RUNNING: infoState = .running
      case COV_ACTIVITY_READY: infoState = .ready
      default: infoState = woken ? .ready : .suspended
      }
      if infoState == .running || infoState == .notStarted { wait = nil }
      var waitingSeconds: Double?
      // A generator's stamp counts its switch-outs: no time.
      if (infoState == .suspended || infoState == .ready) && ticks != 0 && !record.isGenerator {
        let elapsed = (nowTicks &- ticks) & ((1 << 56) - 1)
        waitingSeconds = Double(elapsed) / ticksPerSecond
      }
      let leaked =
        record.waitFlags & WaitState.abandoned != 0 && record.waitFlags & WaitState.claimed == 0
      return CoroutineInfo(
        id: record.id, name: record.name, kind: record.isGenerator ? .generator : .coroutine,
        state: infoState, wait: wait,
        waitHasTimeout: rawKind & CoroutineWaitKind.timedFlag != 0 && wait != nil,
        waitingSeconds: waitingSeconds, isLeaked: leaked && infoState == .suspended,
        scheduler: record.isGenerator ? nil : descriptions.scheduler(record),
        startFile: descriptions.file(record.startFile, line: record.startLine),
        startLine: Int(record.startLine), scope: record.scope, stack: record.stack,
        backtrace: record.addresses.map(symbols.frame))
    }
    for record in records {
      record.queue?.release()
      record.schedulerObject?.release()
    }
    records = []
    return infos.sorted { $0.id < $1.id }
  }
}
