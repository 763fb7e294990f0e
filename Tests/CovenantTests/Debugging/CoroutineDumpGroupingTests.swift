import CCoroutineContext
import CCovenantShims
import Covenant
import Dispatch
import Foundation
import XCTest

/// The dump's grouping of alike coroutines — named ones too — and the bounded dump written
/// without a snapshot (`CoroutineSnapshot.writeDump`, what the dump signal writes).
final class CoroutineDumpGroupingTests: XCTestCase {
  /// Starts `count` coroutines named `name` on `queue`, each awaiting `promise` from the same
  /// line, and waits until they are all suspended.
  private func park(
    _ count: Int, named name: String?, on queue: DispatchQueue, in scope: CoScope,
    awaiting promise: Promise<Int>
  ) {
    for _ in 0..<count {
      queue.startCoroutine(in: scope, name: name) { _ = try promise.await() }
    }
    waitUntilSuspended(count, named: name, on: queue)
  }

  private func waitUntilSuspended(_ count: Int, named name: String?, on queue: DispatchQueue) {
    queue.sync {}
    let label = "queue \"\(queue.label)\""
    let deadline = DispatchTime.now() + 20
    while DispatchTime.now() < deadline {
      let suspended = CoroutineSnapshot.take(backtraces: false).coroutines.filter {
        $0.scheduler == label && $0.name == name && $0.state == .suspended
      }
      if suspended.count >= count { return }
      usleep(1000)
    }
    XCTFail("\(count) coroutines named \(name ?? "nil") never all suspended")
  }

  func testNamedCoroutinesThatAreAlikeAreGrouped() throws {
    let queue = DispatchQueue(label: "dump.named")
    let scope = CoScope()
    let promise = Promise<Int>()
    park(200, named: "connection", on: queue, in: scope, awaiting: promise)
    park(3, named: "listener", on: queue, in: scope, awaiting: promise)
    park(5, named: nil, on: queue, in: scope, awaiting: promise)
    let mine = CoroutineSnapshot.take().filter { $0.scheduler == "queue \"dump.named\"" }
    let dump = mine.dump()
    XCTAssertTrue(dump.contains("200 coroutines \"connection\" [awaiting Promise<Int>"), dump)
    XCTAssertTrue(dump.contains("3 coroutines \"listener\" [awaiting Promise<Int>"), dump)
    XCTAssertTrue(dump.contains("5 coroutines [awaiting Promise<Int>"), dump)
    XCTAssertEqual(dump.components(separatedBy: "started at").count - 1, 3, dump)
    // The ids of each group were started one after the other: a range.
    let connections = mine.coroutines.filter { $0.name == "connection" }.map(\.id)
    XCTAssertTrue(dump.contains("ids \(connections.min()!)…\(connections.max()!)"), dump)
    XCTAssertTrue(dump.hasPrefix("Covenant coroutine dump: 208 coroutines and generators"), dump)
    // Ungrouped, each is its own entry.
    let ungrouped = mine.dump(groupingIdenticalStacks: false)
    XCTAssertEqual(ungrouped.components(separatedBy: "started at").count - 1, 208)
    promise.fulfill(1)
    try scope.join()
  }

  func testCoroutinesOfOneNameInDifferentStatesAreToldApart() throws {
    let queue = DispatchQueue(label: "dump.states", attributes: .concurrent)
    let scope = CoScope()
    let promise = Promise<Int>()
    let channel = CoChannel<Int>()
    park(4, named: "worker", on: queue, in: scope, awaiting: promise)
    for _ in 0..<6 {
      queue.startCoroutine(in: scope, name: "worker") { _ = try channel.awaitReceive() }
    }
    waitUntilSuspended(10, named: "worker", on: queue)
    let dump = CoroutineSnapshot.take().filter { $0.name == "worker" }.dump()
    XCTAssertTrue(dump.contains("4 coroutines \"worker\" [awaiting Promise<Int>"), dump)
    XCTAssertTrue(dump.contains("6 coroutines \"worker\" [receiving from CoChannel<Int>"), dump)
    channel.cancel()
    promise.fulfill(0)
    try scope.join()
  }

  func testIdsThatAreNotConsecutiveShowTheSmallestAndACount() throws {
    let queue = DispatchQueue(label: "dump.ids")
    let scope = CoScope()
    let promise = Promise<Int>()
    let other = Promise<UInt8>()
    // Alternating waits: each group's ids are every other id.
    for index in 0..<24 {
      if index % 2 == 0 {
        queue.startCoroutine(in: scope, name: "alternating") { _ = try promise.await() }
      } else {
        queue.startCoroutine(in: scope, name: "alternating") { _ = try other.await() }
      }
    }
    waitUntilSuspended(24, named: "alternating", on: queue)
    let snapshot = CoroutineSnapshot.take().filter { $0.name == "alternating" }
    let ids = snapshot.coroutines.map(\.id).sorted()
    XCTAssertEqual(ids.count, 24)
    let dump = snapshot.dump()
    let evens = stride(from: 0, to: 16, by: 2).map { String(ids[$0]) }
    XCTAssertTrue(dump.contains("ids " + evens.joined(separator: ", ") + ", … (4 more)"), dump)
    XCTAssertTrue(dump.contains("12 coroutines \"alternating\" [awaiting Promise<UInt8>"), dump)
    promise.fulfill(0)
    other.fulfill(0)
    try scope.join()
  }

  /// 10,000 named connections parked in one read write a dump of a few kilobytes (it was
  /// 22.6 MB when named coroutines were never grouped).
  func testTheDumpOfManyNamedCoroutinesIsSmall() throws {
    let count = TestScale.liveCoroutines(10_000)
    let queue = DispatchQueue(label: "dump.many")
    let scope = CoScope()
    let promise = Promise<Int>()
    park(count, named: "connection", on: queue, in: scope, awaiting: promise)
    let text = try Self.capture { CoroutineSnapshot.writeDump(to: $0) }
    XCTAssertTrue(text.contains("\(count) coroutines \"connection\" [awaiting Promise<Int>"))
    XCTAssertTrue(text.hasPrefix("Covenant coroutine dump: "), String(text.prefix(200)))
    // The other tests' leftovers may add entries, but nothing near one per coroutine.
    XCTAssertLessThan(text.utf8.count, 64 * 1024, String(text.prefix(4096)))
    promise.fulfill(1)
    try scope.join()
  }

  /// `writeDump` keeps a record per group, not per coroutine: 10,000 alike coroutines cost it
  /// a few kilobytes at its peak, where a snapshot of them holds 7 MB (every coroutine's
  /// `CoroutineInfo`). The peak is sampled by another thread while the dump runs.
  func testWriteDumpHoldsMemoryPerGroupNotPerCoroutine() throws {
    if TestScale.runsUnderSanitizer { throw XCTSkip("the sanitizers' allocators are not counted") }
    if cov_heap_in_use() == 0 { throw XCTSkip("no count of heap bytes in use on this platform") }
    let queue = DispatchQueue(label: "dump.peak")
    let scope = CoScope()
    let promise = Promise<Int>()
    park(10_000, named: "connection", on: queue, in: scope, awaiting: promise)
    let devNull = open("/dev/null", O_WRONLY)
    defer { close(devNull) }
    CoroutineSnapshot.writeDump(to: devNull)  // caches (symbols, demangler) made once
    let growth = Self.peakHeapGrowth { _ in CoroutineSnapshot.writeDump(to: devNull) }
    XCTAssertLessThan(growth, 1 << 20, "\(growth) bytes at the peak")
    // The sampling sees a peak when there is one: a snapshot's (7 MB here).
    // Sampled once more while the snapshot is certainly alive: in release builds it is taken
    // and printed faster than the sampling thread's period.
    let snapshotGrowth = Self.peakHeapGrowth { sampleNow in
      let snapshot = CoroutineSnapshot.take()
      _ = snapshot.dump()
      sampleNow()
      withExtendedLifetime(snapshot) {}
    }
    XCTAssertGreaterThan(snapshotGrowth, 1 << 20, "a snapshot of 10,000 coroutines")
    promise.fulfill(1)
    try scope.join()
  }

  /// How far the heap grew above where it was, at most, while `body` ran.
  private static func peakHeapGrowth(_ body: (_ sampleNow: () -> Void) -> Void) -> Int {
    let sampler = HeapSampler()
    let started = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let baseline = cov_heap_in_use()
    Thread.detachNewThread {
      _ = sampler.sample()
      started.signal()
      while sampler.sample() {}
      done.signal()
    }
    // The sampler must be running before the body: a thread started late would see its peak
    // gone (a snapshot is freed as soon as it has been printed).
    started.wait()
    body { _ = sampler.sample() }
    sampler.stop()
    done.wait()
    return max(0, sampler.peak - Int(baseline))
  }

  private final class HeapSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private(set) var peak = 0

    /// Records the heap's size now; false once stopped.
    func sample() -> Bool {
      let now = Int(cov_heap_in_use())
      return lock.withLock {
        peak = max(peak, now)
        return !stopped
      }
    }

    func stop() { lock.withLock { stopped = true } }
  }

  /// `writeDump` and a snapshot's `dump()` print the same entries.
  func testWriteDumpPrintsWhatASnapshotsDumpPrints() throws {
    let queue = DispatchQueue(label: "dump.same")
    let scope = CoScope()
    let promise = Promise<Int>()
    park(30, named: "same", on: queue, in: scope, awaiting: promise)
    let written = try Self.capture { CoroutineSnapshot.writeDump(to: $0) }
    let dumped = CoroutineSnapshot.take().dump()
    func entry(_ text: String) -> String? {
      text.components(separatedBy: "\n\n").first { $0.hasPrefix("30 coroutines \"same\"") }
        .map {
          $0.trimmingCharacters(in: .newlines)
            .replacingOccurrences(of: #", \d+ ms\]"#, with: "]", options: .regularExpression)
        }
    }
    XCTAssertNotNil(entry(written), written)
    XCTAssertEqual(entry(written), entry(dumped))
    promise.fulfill(1)
    try scope.join()
  }

  // MARK: - Live count

  func testTheLiveCountCountsWithoutASnapshot() throws {
    let count = TestScale.liveCoroutines(20_000)
    let queue = DispatchQueue(label: "dump.live")
    let scope = CoScope()
    let promise = Promise<Int>()
    park(count, named: "live", on: queue, in: scope, awaiting: promise)
    // What other tests left behind may still be finishing: a little slack.
    let live = CoroutineSnapshot.liveCount
    let listed = CoroutineSnapshot.take(backtraces: false).coroutines.count
    XCTAssertGreaterThanOrEqual(live, count)
    XCTAssertLessThanOrEqual(abs(live - listed), 16, "\(live) counted, \(listed) listed")
    promise.fulfill(1)
    try scope.join()
    XCTAssertLessThanOrEqual(CoroutineSnapshot.liveCount, live - count + 16)
  }

  func testTheLiveCountWhileCoroutinesStartAndFinish() throws {
    let queue = DispatchQueue(label: "dump.churn", attributes: .concurrent)
    let group = DispatchGroup()
    let parked = 500
    let scope = CoScope()
    let promise = Promise<Int>()
    park(parked, named: "parked", on: queue, in: scope, awaiting: promise)
    let floor = CoroutineSnapshot.liveCount
    // Short-lived coroutines come and go while the count is read: never fewer than the parked
    // ones (alive for the whole time), never more than all there were plus the churn.
    let churn = 4
    for _ in 0..<churn {
      group.enter()
      DispatchQueue.global().async {
        for _ in 0..<2_000 { queue.startCoroutine {} }
        group.leave()
      }
    }
    var reads = 0
    while group.wait(timeout: .now()) == .timedOut {
      let live = CoroutineSnapshot.liveCount
      XCTAssertGreaterThanOrEqual(live, parked)
      XCTAssertLessThanOrEqual(live, floor + churn * 2_000)
      reads += 1
    }
    XCTAssertGreaterThan(reads, 0)
    promise.fulfill(1)
    try scope.join()
  }

  // MARK: - Capture

  /// What `write` writes to a pipe, read on another thread as it comes.
  static func capture(_ write: (Int32) -> Void) throws -> String {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
    let reader = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
    let collected = Collected()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      collected.data = reader.readDataToEndOfFile()
      done.signal()
    }
    write(ends[1])
    close(ends[1])
    done.wait()
    return String(decoding: collected.data, as: UTF8.self)
  }

  private final class Collected: @unchecked Sendable {
    var data = Data()
  }
}
