import AllocationCounter
import Covenant
import Dispatch
import Foundation

// M1, M2, M3: many coroutines suspended at once, each in a fresh child process so that other
// benchmarks' memory does not count, with default settings. M1 and M3 also run with
// COVENANT_STACK_GUARDS=mprotect (lines M1' and M3'): the stack path of kernels without
// MADV_GUARD_INSTALL (before Linux 6.13), where a dedicated stack costs two memory mappings.

/// One memory workload: `count` coroutines on one serial queue, each awaiting its own pending
/// `Promise` (M1, M3) or `CoPromise` (M2, the shape of PeerBench's W7).
struct MemoryShape {
  let id: String
  let count: Int
  let awaitsFuture: Bool
  /// Peak RSS budget in bytes (M1, M3), or bytes per suspended coroutine (M2).
  let budget: Int
}

let memoryShapes = [
  "M1": MemoryShape(id: "M1", count: 100_000, awaitsFuture: false, budget: 1 << 30),
  "M2": MemoryShape(id: "M2", count: 10_000, awaitsFuture: true, budget: 1_000),
  "M3": MemoryShape(id: "M3", count: 1_000_000, awaitsFuture: false, budget: 3 << 29),
]

/// Reads a `kB` field of /proc/self/status (VmRSS, VmHWM), in bytes.
func procStatusBytes(_ field: String) -> Int? {
  guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
    return nil
  }
  for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
    let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
    return Int(digits).map { $0 * 1024 }
  }
  return nil
}

/// Bytes of the malloc heap in use (glibc's `mallinfo2`), to tell heap from stack pages.
func heapBytesInUse() -> Int { Int(cov_heap_bytes_in_use()) }

/// What the child's coroutines share: the counters (touched only on the queue) and the signal.
private final class MemoryRun: @unchecked Sendable {
  let count: Int
  var suspended = 0
  var completed = 0
  let done = DispatchSemaphore(value: 0)
  init(count: Int) { self.count = count }

  func finishedOne() {
    completed += 1
    if completed == count { done.signal() }
  }
}

/// The child process (`CovenantBenchmarks --memory-child ID [dedicated]`): starts the shape's
/// coroutines on one serial queue, each awaiting its own pending promise (a body capturing the
/// promise and one shared object, as a user's would); once all are suspended, fulfils every
/// promise and waits until all coroutines have finished. Prints one machine-readable line:
/// `MEMCHILD start=<rss before the promises> base=<rss after them> suspendedRSS=<rss, all
/// suspended> peak=<VmHWM at the end> heapStart= heapSuspended= suspended= completed= finished=
/// ms= guards=`.
func memoryChild(_ id: String, dedicated: Bool) -> Int32 {
  guard let shape = memoryShapes[id] else { return 64 }
  if dedicated { Coroutine.defaultStackMode = .dedicated }
  let queue = DispatchQueue(label: "bench.memory")
  // A small round first, so that the code (pages of the executable and the libraries) and the
  // queue's thread are resident before the baseline: the figures are what coroutines cost.
  _ = suspendAndResume(shape, count: 100, on: queue)
  let start = procStatusBytes("VmRSS") ?? 0
  let heapStart = heapBytesInUse()
  let outcome = suspendAndResume(shape, count: shape.count, on: queue)
  let peak = procStatusBytes("VmHWM") ?? 0
  let guards = ProcessInfo.processInfo.environment["COVENANT_STACK_GUARDS"] ?? "auto"
  print(
    "MEMCHILD start=\(start) base=\(outcome.base) suspendedRSS=\(outcome.suspendedRSS) peak=\(peak) heapStart=\(heapStart) heapSuspended=\(outcome.heapSuspended) suspended=\(outcome.suspended) completed=\(outcome.completed) finished=\(outcome.finished) ms=\(String(format: "%.0f", outcome.milliseconds)) guards=\(guards)"
  )
  fflush(stdout)
  return outcome.finished ? 0 : 1
}

/// What one round of `suspendAndResume` measured.
private struct MemoryOutcome {
  var base = 0, suspendedRSS = 0, heapSuspended = 0
  var suspended = 0, completed = 0
  var finished = false
  var milliseconds = 0.0
}

/// Makes `count` pending promises of the shape's kind, starts a coroutine awaiting each on
/// `queue`, measures once all are suspended, fulfils them all and waits for the coroutines.
private func suspendAndResume(_ shape: MemoryShape, count: Int, on queue: DispatchQueue)
  -> MemoryOutcome
{
  var outcome = MemoryOutcome()
  let run = MemoryRun(count: count)
  let futures = shape.awaitsFuture ? (0..<count).map { _ in CoPromise<Int>() } : []
  let promises = shape.awaitsFuture ? [] : (0..<count).map { _ in Promise<Int>() }
  outcome.base = procStatusBytes("VmRSS") ?? 0
  let startTime = nowNanos()
  // One loop per kind on purpose: M2 counts every byte a suspended coroutine holds, and one
  // generic helper for both kinds added about 16 B to each (measured: heap with 10,000
  // suspended 9.53–9.64 MB against 9.37–9.45 MB), its closures' contexts carrying the item
  // type's metadata and conformance besides the item.
  for future in futures {
    queue.startCoroutine {
      run.suspended += 1
      _ = try future.await()
      run.finishedOne()
    }
  }
  for promise in promises {
    queue.startCoroutine {
      run.suspended += 1
      _ = try promise.await()
      run.finishedOne()
    }
  }
  // The queue is FIFO: once this runs, every coroutine has run up to its await (or failed to
  // start: a coroutine without a stack never runs and is reported on stderr).
  outcome.suspended = queue.sync { run.suspended }
  outcome.suspendedRSS = procStatusBytes("VmRSS") ?? 0
  outcome.heapSuspended = heapBytesInUse()
  for (i, future) in futures.enumerated() { future.success(i) }
  for (i, promise) in promises.enumerated() { promise.fulfill(i) }
  outcome.finished =
    outcome.suspended == count ? run.done.wait(timeout: .now() + 240) == .success : false
  outcome.completed = queue.sync { run.completed }
  outcome.milliseconds = Double(nowNanos() - startTime) / 1e6
  return outcome
}

/// Runs the child for `id` (with `environment` added) and returns its fields, or nil after
/// reporting why not.
func runMemoryChild(
  _ id: String, line: String, environment extra: [String: String] = [:],
  dedicated: Bool = false
) -> [String: String]? {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
  process.arguments = ["--memory-child", id] + (dedicated ? ["dedicated"] : [])
  var environment = ProcessInfo.processInfo.environment
  for (key, value) in extra { environment[key] = value }
  process.environment = environment
  let output = Pipe()
  process.standardOutput = output
  do {
    try process.run()
  } catch {
    reportUnavailable(line, "MISS", "could not start the child process: \(error)")
    return nil
  }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let text = String(decoding: data, as: UTF8.self)
  guard let result = text.split(separator: "\n").first(where: { $0.hasPrefix("MEMCHILD ") }) else {
    reportUnavailable(
      line, "MISS",
      "child exited with status \(process.terminationStatus) (reason \(process.terminationReason.rawValue)) before reporting"
    )
    return nil
  }
  var fields: [String: String] = [:]
  for pair in result.split(separator: " ").dropFirst() {
    let parts = pair.split(separator: "=", maxSplits: 1)
    if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
  }
  return fields
}

private func mib(_ bytes: Int) -> String { String(format: "%.1fMiB", Double(bytes) / 1_048_576) }

/// M1 / M3: peak RSS of the whole child against the budget, all coroutines completed; once
/// with the kernel's guard path and once (`'`) with the mprotect path forced.
func benchPeakMemory(_ id: String) {
  let shape = memoryShapes[id]!
  for (line, environment) in [
    (id, [String: String]()), (id + "'", ["COVENANT_STACK_GUARDS": "mprotect"]),
  ] {
    guard let fields = runMemoryChild(id, line: line, environment: environment) else { continue }
    let base = Int(fields["base"] ?? "") ?? 0
    let peak = Int(fields["peak"] ?? "") ?? 0
    let completed = Int(fields["completed"] ?? "") ?? 0
    let perCoroutine = Double(peak - base) / Double(shape.count)
    let allCompleted = completed == shape.count && fields["finished"] == "true"
    report(
      line, covenant: mib(peak), baselineName: "budget", baseline: mib(shape.budget),
      ratio: Double(peak) / Double(shape.budget), target: "≤ 1.00",
      pass: allCompleted && peak <= shape.budget,
      extra: [
        "guards=\(environment.isEmpty ? "kernel default" : "mprotect (as before Linux 6.13)")",
        "bytes/coroutine=\(Int(perCoroutine.rounded()))",
        "baseRSS=\(mib(base))",
        "completed=\(completed)/\(shape.count)",
        "time=\(fields["ms"] ?? "?")ms",
      ])
  }
}

/// M2: bytes per suspended coroutine, everything it takes included (the awaited `CoPromise`,
/// the coroutine, its registration, its copied frames, the shared stacks' pages), from RSS;
/// with the heap's share and, for comparison, the same workload on dedicated stacks.
func benchM2() {
  let shape = memoryShapes["M2"]!
  guard let shared = runMemoryChild("M2", line: "M2") else { return }
  let dedicated = runMemoryChild("M2", line: "M2", dedicated: true)
  func perCoroutine(_ fields: [String: String], _ from: String, _ to: String) -> Double {
    Double((Int(fields[to] ?? "") ?? 0) - (Int(fields[from] ?? "") ?? 0)) / Double(shape.count)
  }
  let bytes = perCoroutine(shared, "start", "suspendedRSS")
  let heap = perCoroutine(shared, "heapStart", "heapSuspended")
  let completed = Int(shared["completed"] ?? "") ?? 0
  var extra = [
    String(format: "heap/coroutine=%.0fB", heap),
    "completed=\(completed)/\(shape.count)",
  ]
  if let dedicated {
    extra.append(
      String(format: "dedicated-stacks=%.0fB", perCoroutine(dedicated, "start", "suspendedRSS")))
    extra.append(
      String(format: "dedicated-heap=%.0fB", perCoroutine(dedicated, "heapStart", "heapSuspended")))
  }
  report(
    "M2", covenant: String(format: "%.0fB", bytes), baselineName: "budget",
    baseline: "\(shape.budget)B", ratio: bytes / Double(shape.budget), target: "≤ 1.00",
    pass: completed == shape.count && shared["finished"] == "true" && bytes <= Double(shape.budget),
    extra: extra)
}
