// CovenantSoak: runs the random model programs and the stress mix for a given time and checks
// that nothing fails, nothing hangs, and memory stays flat.
//
//   swift run -c release CovenantSoak --seconds 600
//
// Options: --seconds N (default 60); --max-heap-growth-mib N (default 16), --max-rss-growth-mib
// N (default 32) and --max-mapping-growth N (default 16): the bounds on growth from the warm-up
// point (after the first tenth of the run, when thread pools, stack pools and allocator arenas
// have filled) to the end. RSS is measured after malloc_trim(0): without it, glibc keeps the
// free pages of each arena's high-water mark resident (a 10-minute run measured 63 → 179 MiB
// with 2-3 MiB actually in use). Exits 1 on any failed invariant (printing the program's seed) or a broken bound.
import Covenant
import CovenantModel
import Dispatch
import Foundation

struct Options {
  var seconds = 60.0
  var maxRSSGrowthMiB = 32.0
  var maxMappingGrowth = 16
  var maxHeapGrowthMiB = 16.0

  init(_ arguments: [String]) {
    var iterator = arguments.dropFirst().makeIterator()
    while let argument = iterator.next() {
      guard let value = iterator.next().flatMap(Double.init) else {
        fatalError(
          "usage: CovenantSoak [--seconds N] [--max-rss-growth-mib N] [--max-mapping-growth N]")
      }
      switch argument {
      case "--seconds": seconds = value
      case "--max-rss-growth-mib": maxRSSGrowthMiB = value
      case "--max-mapping-growth": maxMappingGrowth = Int(value)
      case "--max-heap-growth-mib": maxHeapGrowthMiB = value
      default: fatalError("unknown option \(argument)")
      }
    }
  }
}

/// Resident set size in MiB (/proc/self/statm), the number of memory mappings
/// (/proc/self/maps lines), and the bytes malloc has handed out and not had back (malloc_info's
/// in-use total: what a leak would grow). RSS is sampled after malloc_trim (see `now`).
struct MemorySample: CustomStringConvertible {
  let rssMiB: Double
  let mappings: Int
  var heapMiB: Double = 0

  /// A sample taken after `malloc_trim(0)` has handed glibc's free pages back to the system, so
  /// that RSS shows what is live rather than the allocator's high-water mark in each arena.
  static func now() -> MemorySample {
    trimMalloc()
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = Double(statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0)
    let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
    return MemorySample(
      rssMiB: pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576,
      mappings: maps.split(separator: "\n").count,
      heapMiB: Double(mallocInUse()) / 1_048_576)
  }

  var description: String {
    String(format: "RSS %.1f MiB, heap in use %.1f MiB, %d mappings", rssMiB, heapMiB, mappings)
  }
}

/// Writes a line to standard output at once (unbuffered, so a log file shows progress).
func log(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Bytes glibc's malloc has handed out and not had back: memory obtained from the system minus
/// free chunks, plus mmapped chunks, from `malloc_info` (looked up at run time: Swift's Glibc
/// module does not import malloc.h). 0 where unavailable.
func mallocInUse() -> Int {
  typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
  guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return 0 }
  var buffer: UnsafeMutablePointer<CChar>? = nil
  var size = 0
  guard let stream = open_memstream(&buffer, &size) else { return 0 }
  _ = unsafeBitCast(symbol, to: MallocInfo.self)(0, stream)
  fclose(stream)
  defer { free(buffer) }
  guard let buffer, let totals = String(cString: buffer).components(separatedBy: "</heap>").last
  else { return 0 }
  func total(_ tag: String) -> Int {
    guard let tagRange = totals.range(of: tag),
      let sizeRange = totals[tagRange.upperBound...].range(of: "size=\"")
    else { return 0 }
    return Int(totals[sizeRange.upperBound...].prefix { $0.isNumber }) ?? 0
  }
  return total("<system type=\"current\"") - total("<total type=\"fast\"")
    - total("<total type=\"rest\"") + total("<total type=\"mmap\"")
}

/// glibc's `malloc_trim(0)` (looked up at run time, as `mallocInUse`): returns free memory of
/// every arena to the system.
func trimMalloc() {
  typealias MallocTrim = @convention(c) (Int) -> Int32
  guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
  _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
}

func fail(_ what: String, seed: UInt64, _ failures: [String]) -> Never {
  log("FAILED \(what), \(SeedPlan.replayHint(seed))")
  for failure in failures { log("  \(failure)") }
  exit(1)
}

let options = Options(CommandLine.arguments)
DispatchQueue.promises = .global()  // no main run loop here
let start = Date()
let initial = MemorySample.now()
log("soak: \(Int(options.seconds)) s; start: \(initial)")
var baseline: MemorySample?
var peak = initial
var promisePrograms = 0
var channelPrograms = 0
var stressRuns = 0
var operations = 0
var nextReport = 30.0
var system = SystemRandomNumberGenerator()
while Date().timeIntervalSince(start) < options.seconds {
  // One round: 500 promise programs, 200 channel programs, then one stress run in rotation.
  for _ in 0..<500 {
    let seed = system.next()
    let report = PromiseProgramRunner.run(PromiseProgram(seed: seed))
    if !report.failures.isEmpty { fail("promise program", seed: seed, report.failures) }
    promisePrograms += 1
    operations += report.operations
  }
  for _ in 0..<200 {
    let seed = system.next()
    let (done, failures) = ChannelProgramRunner.run(ChannelProgram(seed: seed))
    if !failures.isEmpty { fail("channel program", seed: seed, failures) }
    channelPrograms += 1
    operations += done
  }
  let seed = system.next()
  let stress: (operations: Int, failures: [String])
  switch stressRuns % 3 {
  case 0: stress = StressMix.promiseOperations(threads: 8, operationsPerThread: 20_000, seed: seed)
  case 1: stress = StressMix.hoppingCoroutines(count: 10_000, seed: seed)
  default:
    stress = ChannelProgramRunner.run(
      ChannelProgram(seed: seed, maxSenders: 8, maxElements: 1_000, maxReceivers: 8), timeout: 120)
  }
  if !stress.failures.isEmpty { fail("stress run \(stressRuns % 3)", seed: seed, stress.failures) }
  stressRuns += 1
  operations += stress.operations
  let elapsed = Date().timeIntervalSince(start)
  let sample = MemorySample.now()
  peak = MemorySample(
    rssMiB: max(peak.rssMiB, sample.rssMiB), mappings: max(peak.mappings, sample.mappings),
    heapMiB: max(peak.heapMiB, sample.heapMiB))
  if baseline == nil && elapsed >= options.seconds / 10 {
    baseline = sample
    log(String(format: "%6.0f s: warm-up point: %@", elapsed, sample.description))
  }
  if elapsed >= nextReport {
    log(
      String(
        format: "%6.0f s: %d promise + %d channel programs, %d stress runs, %d operations; %@",
        elapsed, promisePrograms, channelPrograms, stressRuns, operations, sample.description))
    nextReport += 30
  }
}
let final = MemorySample.now()
let warm = baseline ?? initial
let elapsed = Date().timeIntervalSince(start)
log(
  String(
    format: "done: %.0f s, %d promise programs, %d channel programs, %d stress runs, %d operations",
    elapsed, promisePrograms, channelPrograms, stressRuns, operations))
log("start: \(initial); warm-up: \(warm); end: \(final); peak: \(peak)")
let rssGrowth = final.rssMiB - warm.rssMiB
let heapGrowth = final.heapMiB - warm.heapMiB
let mappingGrowth = final.mappings - warm.mappings
log(
  String(
    format:
      "growth since warm-up: heap in use %+.1f MiB (bound %.0f), RSS %+.1f MiB (bound %.0f), mappings %+d (bound %d)",
    heapGrowth, options.maxHeapGrowthMiB, rssGrowth, options.maxRSSGrowthMiB,
    mappingGrowth, options.maxMappingGrowth))
if heapGrowth > options.maxHeapGrowthMiB || rssGrowth > options.maxRSSGrowthMiB
  || mappingGrowth > options.maxMappingGrowth
{
  log("FAILED: memory grew beyond the bound")
  exit(1)
}
log("OK")
