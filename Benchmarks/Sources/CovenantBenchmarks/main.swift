import Dispatch
import Foundation
import NIOPosix

// CovenantBenchmarks: every benchmark id of Benchmarks/README.md against its baseline, in one run.
//
//   swift run -c release --package-path Benchmarks CovenantBenchmarks [--quick] [--only P1,C2]
//                                                                    [--verbose]
// One line per id on stdout:
//   ID  covenant=<figure>  baseline(<name>)=<figure>  ratio=<x.xx>  target=≤ y  PASS|MISS
// Always exits 0 once the run completes (a MISS is a measurement, not a failure); exits 2 if
// an id hangs (the watchdog prints `ID  ...  MISS (timed out …)` first).

let allIDs = [
  "P1", "P2", "P3", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "S1", "S2", "D1", "M1", "M2", "M3",
  "B1", "B2", "B3",
  "F1", "F2", "F3",
]
/// Ids with noise-free counts (allocations, instructions); A1 = await of a resolved future;
/// C7P = `poll()` against `selectUnbiased` on C7's channels (context for C7); T1 = a timed
/// await whose timer is cancelled; S1A = S1 against the actor semaphore.
let countedIDs = [
  "P1", "P2", "P3", "C1", "C2", "C3", "C4", "C7", "C7P", "A1", "T1", "S1", "S1A", "S2", "C6",
  "B1", "B2",
  "F1", "F2", "F3",
]

let arguments = Array(CommandLine.arguments.dropFirst())

if let index = arguments.firstIndex(of: "--memory-child"), index + 1 < arguments.count {
  exit(memoryChild(arguments[index + 1], dedicated: arguments.contains("dedicated")))
}

func usage() -> Never {
  print(
    """
    usage: CovenantBenchmarks [--quick] [--only ID,ID,...] [--verbose] [--side covenant|baseline]
      --quick     fewer iterations and repetitions (whole run under two minutes)
      --only      run only these ids (\(allIDs.joined(separator: ", ")))
      --verbose   print every sample and progress on stderr
      --side      run only one side of each comparison (for profilers; ratios meaningless)
      --allocations        allocations per operation of every counted id against its budget
                           (\(countedIDs.joined(separator: ", "))); exits 1 when one is over
      --run ID --ops N     run one workload (with --side) once for N operations, for callgrind
    """)
  exit(0)
}

var quick = false
var selected = allIDs
var allocationMode = false
var singleRun: String?
var singleOperations = 10_000
var index = 0
while index < arguments.count {
  switch arguments[index] {
  case "--quick": quick = true
  case "--verbose", "-v": verbose = true
  case "--only":
    index += 1
    guard index < arguments.count else { usage() }
    selected = arguments[index].split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces).uppercased()
    }
    if let unknown = selected.first(where: { !allIDs.contains($0) && !countedIDs.contains($0) }) {
      print("unknown id \(unknown)")
      usage()
    }
  case let other where other.hasPrefix("--only="):
    selected = other.dropFirst("--only=".count).split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces).uppercased()
    }
  case "--side":
    index += 1
    guard index < arguments.count else { usage() }
    switch arguments[index] {
    case "covenant": onlySide = .covenant
    case "baseline": onlySide = .baseline
    default: usage()
    }
  case "--allocations": allocationMode = true
  case "--run":
    index += 1
    guard index < arguments.count else { usage() }
    singleRun = arguments[index].uppercased()
  case "--ops":
    index += 1
    guard index < arguments.count, let n = Int(arguments[index]), n > 0 else { usage() }
    singleOperations = n
  case "--help", "-h": usage()
  default:
    print("unknown argument \(arguments[index])")
    usage()
  }
  index += 1
}

if let singleRun {
  DispatchQueue.promises = .global()
  runSingleWorkload(singleRun, side: onlySide ?? .covenant, operations: singleOperations)
  exit(0)
}

if allocationMode {
  DispatchQueue.promises = .global()
  let ids = selected == allIDs ? countedIDs : selected
  exit(runAllocationCounts(ids) ? 0 : 1)
}

let effort = Effort(quick: quick)
// Nothing here chains without `on:`, but keep stray blocks off the (never run) main queue.
DispatchQueue.promises = .global()

let overallStart = nowNanos()
#if DEBUG
  emit("warning: debug build; numbers are meaningless (use -c release)")
#endif
emit(
  "CovenantBenchmarks \(quick ? "--quick" : "(full)")  cores=\(ProcessInfo.processInfo.activeProcessorCount)  ids=\(selected.joined(separator: ","))"
)

let nio = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let watchdog = Watchdog()

for id in allIDs where selected.contains(id) {
  let start = nowNanos()
  // Each id normally takes seconds (P3 and C1 the longest: ~20 s in a full run).
  // M3 runs a million coroutines, twice (both guard paths), in child processes.
  watchdog.watch(id, seconds: id == "M3" ? 900 : quick ? 90 : 300)
  switch id {
  case "P1": benchP1(effort)
  case "P2": benchP2(effort)
  case "P3": benchP3(effort, group: nio)
  case "C1": benchC1(effort)
  case "C2": benchC2(effort)
  case "C3": benchC3(effort)
  case "C4": benchC4(effort)
  case "C5": benchC5(effort)
  case "C6": benchC6(effort)
  case "C7": benchC7(effort)
  case "S1": benchS1(effort)
  case "S2": benchS2(effort)
  case "D1": benchD1(effort)
  case "M1", "M3": benchPeakMemory(id)
  case "M2": benchM2()
  case "B1": benchB1(effort)
  case "B2": benchB2(effort)
  case "B3": benchB3(effort)
  case "F1": benchF1(effort)
  case "F2": benchF2(effort)
  case "F3": benchF3(effort)
  default: break
  }
  watchdog.stop()
  note("\(id) took \(String(format: "%.1f", Double(nowNanos() - start) / 1e9)) s")
}

try? nio.syncShutdownGracefully()
emit(String(format: "done in %.1f s", Double(nowNanos() - overallStart) / 1e9))
exit(0)
