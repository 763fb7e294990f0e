import Foundation

// C5 (the raw context switch) and C6 (evict + restore of a shared-stack coroutine's frames),
// measured by the C benchmark in Benchmarks/CSwitch (its own run.sh). This runs it once and
// re-prints its `C5` and `C6` lines.

/// The Benchmarks/ directory: next to this source file when built from a checkout, else the
/// current directory's `Benchmarks/` (or the current directory itself).
func benchmarksDirectory() -> URL {
  let fromSource = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // CovenantBenchmarks/
    .deletingLastPathComponent()  // Sources/
    .deletingLastPathComponent()  // Benchmarks/
  let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
  for candidate in [fromSource, cwd.appendingPathComponent("Benchmarks"), cwd]
  where FileManager.default.fileExists(
    atPath: candidate.appendingPathComponent("Package.swift").path)
    && FileManager.default.fileExists(
      atPath: candidate.appendingPathComponent("Sources/CovenantBenchmarks").path)
  {
    return candidate
  }
  return fromSource
}

/// The output of `CSwitch/run.sh` (run once per process: it prints both C5 and C6), or why
/// it could not be had.
private nonisolated(unsafe) var cSwitchOutput: Result<[String], CSwitchUnavailable>?

struct CSwitchUnavailable: Error {
  let reason: String
}

private func cSwitchLines(_ effort: Effort) -> Result<[String], CSwitchUnavailable> {
  if let cSwitchOutput { return cSwitchOutput }
  let result = runCSwitch(effort)
  cSwitchOutput = result
  return result
}

private func runCSwitch(_ effort: Effort) -> Result<[String], CSwitchUnavailable> {
  let script = benchmarksDirectory().appendingPathComponent("CSwitch/run.sh")
  guard FileManager.default.fileExists(atPath: script.path) else {
    return .failure(CSwitchUnavailable(reason: "Benchmarks/CSwitch/run.sh not found"))
  }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/bash")
  process.arguments = [script.path] + (effort.quick ? ["3000000", "5"] : [])
  process.currentDirectoryURL = script.deletingLastPathComponent()
  let output = Pipe()
  process.standardOutput = output
  do { try process.run() } catch {
    return .failure(CSwitchUnavailable(reason: "could not run CSwitch/run.sh: \(error)"))
  }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let text = String(decoding: data, as: UTF8.self)
  note("CSwitch script output:\n\(text)")
  return .success(text.split(separator: "\n").map(String.init))
}

/// C5: re-prints the C benchmark's `C5` line.
func benchC5(_ effort: Effort) {
  switch cSwitchLines(effort) {
  case .failure(let unavailable): reportUnavailable("C5", "MISSING", unavailable.reason)
  case .success(let lines):
    if let line = lines.first(where: { $0.hasPrefix("C5 ") }) {
      emit(line)
    } else {
      reportUnavailable("C5", "MISSING", "CSwitch/run.sh printed no C5 line")
    }
  }
}

/// C6: re-prints the C benchmark's `C6` lines (evict + restore at 256 B, 1 KiB and 4 KiB of
/// stack in use, with their ratio to C5's raw switch round trip).
func benchC6(_ effort: Effort) {
  switch cSwitchLines(effort) {
  case .failure(let unavailable): reportUnavailable("C6", "MISSING", unavailable.reason)
  case .success(let lines):
    let c6 = lines.filter { $0.hasPrefix("C6 ") }
    if c6.isEmpty { reportUnavailable("C6", "MISSING", "CSwitch/run.sh printed no C6 line") }
    c6.forEach(emit)
  }
}
