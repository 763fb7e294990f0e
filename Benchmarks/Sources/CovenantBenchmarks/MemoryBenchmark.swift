import Covenant
import Dispatch
import Foundation

// M1: 100,000 coroutines suspended at once, in a fresh process so other benchmarks' memory
// does not count.

let m1Count = 100_000
let m1Budget = 1 << 30  // 1 GiB

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

/// The child process (`CovenantBenchmarks --m1-child`): starts `m1Count` coroutines on one
/// serial queue, each awaiting its own pending `Promise`; once all are suspended, fulfils every
/// promise and waits until all coroutines have finished. Prints one machine-readable line:
/// `M1CHILD base=<bytes> peak=<bytes> suspended=<n> completed=<n> ms=<ms>`.
func m1Child() -> Int32 {
  let queue = DispatchQueue(label: "bench.m1")
  let promises = (0..<m1Count).map { _ in Promise<Int>() }
  // After the promises exist: the figure is what the coroutines themselves cost.
  let base = procStatusBytes("VmRSS") ?? 0
  let suspended = Box(0)  // touched only on `queue`
  let completed = Box(0)  // touched only on `queue`
  let done = DispatchSemaphore(value: 0)
  let start = nowNanos()

  for promise in promises {
    queue.startCoroutine {
      suspended.value += 1
      _ = try promise.await()
      completed.value += 1
      if completed.value == m1Count { done.signal() }
    }
  }
  // The queue is FIFO: once this runs, every coroutine has run up to its await (or failed to
  // start: a coroutine without a stack never runs and is reported on stderr).
  let suspendedCount = queue.sync { suspended.value }
  let atPeakSuspension = procStatusBytes("VmRSS") ?? 0
  for (i, promise) in promises.enumerated() { promise.fulfill(i) }
  let finished = suspendedCount == m1Count ? done.wait(timeout: .now() + 120) == .success : false
  let completedCount = queue.sync { completed.value }
  let elapsed = Double(nowNanos() - start) / 1e6
  let peak = procStatusBytes("VmHWM") ?? 0
  print(
    "M1CHILD base=\(base) peak=\(peak) suspendedRSS=\(atPeakSuspension) suspended=\(suspendedCount) completed=\(completedCount) finished=\(finished) ms=\(String(format: "%.0f", elapsed))"
  )
  fflush(stdout)
  return finished ? 0 : 1
}

/// M1 (parent side): runs the child and reports its peak RSS and bytes per coroutine.
func benchM1() {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
  if !FileManager.default.isExecutableFile(atPath: process.executableURL!.path) {
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
  }
  process.arguments = ["--m1-child"]
  let output = Pipe()
  process.standardOutput = output
  do {
    try process.run()
  } catch {
    reportUnavailable("M1", "MISS", "could not start the child process: \(error)")
    return
  }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let text = String(decoding: data, as: UTF8.self)
  guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("M1CHILD ") }) else {
    reportUnavailable(
      "M1", "MISS",
      "child exited with status \(process.terminationStatus) (reason \(process.terminationReason.rawValue)) before reporting")
    return
  }
  var fields: [String: String] = [:]
  for pair in line.split(separator: " ").dropFirst() {
    let parts = pair.split(separator: "=", maxSplits: 1)
    if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
  }
  let base = Int(fields["base"] ?? "") ?? 0
  let peak = Int(fields["peak"] ?? "") ?? 0
  let completed = Int(fields["completed"] ?? "") ?? 0
  let perCoroutine = Double(peak - base) / Double(m1Count)
  let allCompleted = completed == m1Count && fields["finished"] == "true"
  let pass = allCompleted && peak <= m1Budget
  let mib = { (bytes: Int) in String(format: "%.1fMiB", Double(bytes) / 1_048_576) }
  report(
    "M1", covenant: mib(peak), baselineName: "budget", baseline: mib(m1Budget),
    ratio: Double(peak) / Double(m1Budget), target: "≤ 1.00",
    pass: pass,
    extra: [
      "bytes/coroutine=\(Int(perCoroutine.rounded()))",
      "baseRSS=\(mib(base))",
      "completed=\(completed)/\(m1Count)",
      "time=\(fields["ms"] ?? "?")ms",
    ])
}
