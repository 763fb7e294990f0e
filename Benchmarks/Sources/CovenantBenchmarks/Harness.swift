import Dispatch
import Foundation

// A small in-process harness: monotonic clock, warm-up, interleaved repetitions, medians.

/// Monotonic time in nanoseconds.
@inline(__always)
func nowNanos() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Runs `body` once and returns the elapsed wall time in nanoseconds divided by `operations`.
@inline(never)
func timePerOp(_ operations: Int, _ body: () -> Void) -> Double {
  let start = nowNanos()
  body()
  let end = nowNanos()
  return Double(end - start) / Double(operations)
}

func median(_ values: [Double]) -> Double {
  precondition(!values.isEmpty)
  let sorted = values.sorted()
  let mid = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// How hard to measure: `--quick` keeps the whole run under two minutes on two cores.
struct Effort {
  let quick: Bool
  /// Timed repetitions per side (odd, so the median is a sample).
  var repetitions: Int { quick ? 5 : 11 }
  /// Untimed runs per side before the timed ones.
  var warmups: Int { quick ? 1 : 2 }
  /// The full count, or the smaller one in quick mode.
  func scaled(_ full: Int, quick quickCount: Int) -> Int { quick ? quickCount : full }
}

/// The medians of an interleaved comparison, in nanoseconds per operation.
struct Comparison {
  var covenant: Double
  var baseline: Double
  var covenantSamples: [Double]
  var baselineSamples: [Double]
  var ratio: Double { covenant / baseline }
}

/// Measures two workloads against each other. Each closure runs one repetition and returns
/// nanoseconds per operation. Repetitions alternate (C B, B C, C B, …) so that slow phases of a
/// shared machine hit both sides alike; the result holds each side's median.
/// `repetitions` overrides the effort's count for workloads made of many short blocks.
/// With `--side covenant|baseline` (for profilers) the other side is not run at all (its figures
/// are then meaningless).
func compare(
  _ effort: Effort, repetitions: Int? = nil, covenant: () -> Double, baseline: () -> Double
) -> Comparison {
  let covenant = onlySide == .baseline ? { 1.0 } : covenant
  let baseline = onlySide == .covenant ? { 1.0 } : baseline
  for _ in 0..<effort.warmups {
    _ = covenant()
    _ = baseline()
  }
  var c: [Double] = []
  var b: [Double] = []
  for rep in 0..<(repetitions ?? effort.repetitions) {
    if rep % 2 == 0 {
      c.append(covenant())
      b.append(baseline())
    } else {
      b.append(baseline())
      c.append(covenant())
    }
  }
  return Comparison(
    covenant: median(c), baseline: median(b), covenantSamples: c, baselineSamples: b)
}

enum Side { case covenant, baseline }

/// Set by `--side`: run only one side of each comparison (a profiling aid).
nonisolated(unsafe) var onlySide: Side?

/// Measures one workload alone (for context figures).
func measure(_ effort: Effort, _ body: () -> Double) -> Double {
  for _ in 0..<effort.warmups { _ = body() }
  return median((0..<effort.repetitions).map { _ in body() })
}

// MARK: - Output

/// Formats nanoseconds with a unit that keeps three or four significant digits.
func formatNanos(_ ns: Double) -> String {
  if ns >= 1_000_000 { return String(format: "%.2fms", ns / 1_000_000) }
  if ns >= 10_000 { return String(format: "%.1fµs", ns / 1_000) }
  if ns >= 1_000 { return String(format: "%.2fµs", ns / 1_000) }
  if ns >= 100 { return String(format: "%.0fns", ns) }
  return String(format: "%.1fns", ns)
}

func formatRatio(_ ratio: Double) -> String { String(format: "%.2f", ratio) }

/// A ratio target as the result lines print it (`≤ 1.05`). Each SPEC §12 limit is one constant
/// (`SpecTarget`), used for both the printed target and the verdict.
func atMost(_ limit: Double) -> String { "≤ \(formatRatio(limit))" }

/// The limits of SPEC §12 that the harness's verdicts use, one place for each.
enum SpecTarget {
  /// P1: × a bare `DispatchQueue.async` round trip.
  static let p1 = 1.05
  /// P2: × bare `DispatchGroup` + `async`.
  static let p2 = 1.25
  /// C1: × bare `async` blocks on the same serial queue.
  static let c1 = 1.5
  /// C1': × empty child tasks of a `TaskGroup`.
  static let c1TaskGroup = 0.25
  /// C2: × two `Task`s ping-ponging through `CheckedContinuation`.
  static let c2 = 0.1
  /// C2': nanoseconds per hand-off, absolute.
  static let c2Nanoseconds = 100.0
}

/// Prints one result line: `ID  covenant=…  baseline(name)=…  ratio=…  target=≤ y  PASS|MISS`,
/// with optional extra fields before the verdict.
func report(
  _ id: String, covenant: String, baselineName: String, baseline: String, ratio: Double,
  target: String, pass: Bool, extra: [String] = []
) {
  var fields = [
    id.padding(toLength: 3, withPad: " ", startingAt: 0),
    "covenant=\(covenant)",
    "baseline(\(baselineName))=\(baseline)",
    "ratio=\(formatRatio(ratio))",
    "target=\(target)",
  ]
  fields += extra
  fields.append(pass ? "PASS" : "MISS")
  emit(fields.joined(separator: "  "))
}

/// Prints a line for an id that could not be measured.
func reportUnavailable(_ id: String, _ status: String, _ reason: String) {
  emit("\(id.padding(toLength: 3, withPad: " ", startingAt: 0))  ...  \(status) (\(reason))")
}

/// Result lines go to stdout, flushed at once (a later crash must not eat them).
func emit(_ line: String) {
  print(line)
  fflush(stdout)
}

/// Progress and detail go to stderr (`--verbose` shows samples).
nonisolated(unsafe) var verbose = false

func note(_ text: @autoclosure () -> String) {
  guard verbose else { return }
  FileHandle.standardError.write(Data("  · \(text())\n".utf8))
}

func noteSamples(_ id: String, _ comparison: Comparison) {
  note(
    "\(id) covenant samples: \(comparison.covenantSamples.map(formatNanos).joined(separator: " "))")
  note(
    "\(id) baseline samples: \(comparison.baselineSamples.map(formatNanos).joined(separator: " "))")
}

// MARK: - Small synchronisation helpers

/// A counter touched only on one serial queue (or by one thread at a time).
final class Box<T>: @unchecked Sendable {
  var value: T
  init(_ value: T) { self.value = value }
}

/// Blocks the calling thread until an async operation completes (for Swift-concurrency
/// baselines called from the synchronous harness). The operation runs on the global executor.
func runBlocking<T>(_ operation: @escaping @Sendable () async -> T) -> T {
  let done = DispatchSemaphore(value: 0)
  let result = Box<T?>(nil)
  Task.detached {
    result.value = await operation()
    done.signal()
  }
  done.wait()
  return result.value!
}

// MARK: - Watchdog

/// Ends the run if one id takes far longer than it should (a hang in the code measured must not
/// hold CI up): prints `ID  ...  MISS (timed out …)` and exits with status 2.
final class Watchdog: @unchecked Sendable {
  private let lock = NSLock()
  private var current: (id: String, deadline: UInt64)?
  private let thread: Thread

  init() {
    let state = Box<Watchdog?>(nil)
    thread = Thread {
      while true {
        Thread.sleep(forTimeInterval: 1)
        state.value?.check()
      }
    }
    state.value = self
    thread.start()
  }

  /// Starts watching `id` for `seconds`.
  func watch(_ id: String, seconds: Double) {
    lock.lock()
    current = (id, nowNanos() + UInt64(seconds * 1e9))
    lock.unlock()
  }

  func stop() {
    lock.lock()
    current = nil
    lock.unlock()
  }

  private func check() {
    lock.lock()
    let expired = current.flatMap { nowNanos() > $0.deadline ? $0.id : nil }
    lock.unlock()
    guard let expired else { return }
    reportUnavailable(expired, "MISS", "timed out: hung or far too slow; run stopped")
    exit(2)
  }
}
