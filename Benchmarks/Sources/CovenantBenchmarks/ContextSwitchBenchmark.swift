import Foundation

// C5: the raw context switch, measured by the C benchmark in Benchmarks/CSwitch (its own
// run.sh, owned separately). This only runs it and re-prints its `C5` line.

/// The Benchmarks/ directory: next to this source file when built from a checkout, else the
/// current directory's `Benchmarks/` (or the current directory itself).
func benchmarksDirectory() -> URL {
  let fromSource = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // CovenantBenchmarks/
    .deletingLastPathComponent()  // Sources/
    .deletingLastPathComponent()  // Benchmarks/
  let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
  for candidate in [fromSource, cwd.appendingPathComponent("Benchmarks"), cwd]
  where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Package.swift").path)
    && FileManager.default.fileExists(
      atPath: candidate.appendingPathComponent("Sources/CovenantBenchmarks").path)
  {
    return candidate
  }
  return fromSource
}

func benchC5(_ effort: Effort) {
  let script = benchmarksDirectory().appendingPathComponent("CSwitch/run.sh")
  guard FileManager.default.fileExists(atPath: script.path) else {
    reportUnavailable("C5", "MISSING", "Benchmarks/CSwitch/run.sh not found")
    return
  }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/bash")
  process.arguments = [script.path]
  process.currentDirectoryURL = script.deletingLastPathComponent()
  var environment = ProcessInfo.processInfo.environment
  if effort.quick { environment["COVENANT_BENCH_QUICK"] = "1" }
  process.environment = environment
  let output = Pipe()
  process.standardOutput = output
  do { try process.run() } catch {
    reportUnavailable("C5", "MISSING", "could not run CSwitch/run.sh: \(error)")
    return
  }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let text = String(decoding: data, as: UTF8.self)
  let lines = text.split(separator: "\n").map(String.init)
  note("C5 script output:\n\(text)")
  if let line = lines.first(where: { $0.hasPrefix("C5 ") || $0.hasPrefix("C5\t") }) {
    emit(line)
  } else {
    reportUnavailable(
      "C5", "MISSING",
      "CSwitch/run.sh printed no C5 line (exit status \(process.terminationStatus))")
  }
}
