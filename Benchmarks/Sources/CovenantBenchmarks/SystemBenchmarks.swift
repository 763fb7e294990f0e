import Covenant
import Dispatch
import Foundation

// B1–B3: the system layer (SPEC §17). B1 is a `BlockingPool` round trip against a hop to
// `DispatchQueue.global()` and back (`scheduler.await`); B2 whole-file reads of 1 KiB with
// `CoFile.read` against Foundation's `Data(contentsOf:)` run on the same pool; B3 a 1 GiB file
// by lines (MB/s and peak RSS) against a `getline` loop making the same strings. No SPEC target:
// the targets are this package's own (Benchmarks/README.md, "The system layer").

// MARK: - Workloads

/// B1 (covenant): `n` × `pool.await {}` of an empty closure, from one coroutine on a serial
/// queue.
func b1Covenant(_ n: Int, queue: DispatchQueue, pool: BlockingPool) {
  runInCoroutine(on: queue) {
    for _ in 0..<n { try pool.await {} }
  }
}

/// B1 (baseline): `n` × `DispatchQueue.global().await {}` from the same coroutine: a hop to a
/// global queue thread and back.
func b1Baseline(_ n: Int, queue: DispatchQueue) {
  let global = DispatchQueue.global()
  runInCoroutine(on: queue) {
    for _ in 0..<n { try global.await {} }
  }
}

/// B2 (covenant): `n` × `CoFile.read(atPath:)` of `path`, from one coroutine.
func b2Covenant(_ n: Int, path: String, queue: DispatchQueue) {
  runInCoroutine(on: queue) {
    for _ in 0..<n { blackHole(try CoFile.read(atPath: path)) }
  }
}

/// B2 (baseline): `n` × `Data(contentsOf:)` of `path` run on the same pool, from one coroutine.
func b2Baseline(_ n: Int, path: String, queue: DispatchQueue) {
  let url = URL(fileURLWithPath: path)
  runInCoroutine(on: queue) {
    for _ in 0..<n { blackHole(try BlockingPool.shared.await { try Data(contentsOf: url) }) }
  }
}

/// B2' (covenant): the same reads from `width` coroutines at once, `n` in all.
func b2ConcurrentCovenant(_ n: Int, width: Int, path: String, queue: DispatchQueue) {
  let group = DispatchGroup()
  for _ in 0..<width {
    group.enter()
    queue.startCoroutine {
      defer { group.leave() }
      for _ in 0..<(n / width) { blackHole(try CoFile.read(atPath: path)) }
    }
  }
  group.wait()
}

/// B2' (baseline): `Data(contentsOf:)` on the pool from `width` coroutines at once.
func b2ConcurrentBaseline(_ n: Int, width: Int, path: String, queue: DispatchQueue) {
  let url = URL(fileURLWithPath: path)
  let group = DispatchGroup()
  for _ in 0..<width {
    group.enter()
    queue.startCoroutine {
      defer { group.leave() }
      for _ in 0..<(n / width) {
        blackHole(try BlockingPool.shared.await { try Data(contentsOf: url) })
      }
    }
  }
  group.wait()
}

/// B3 (covenant): the lines of `path` with `CoFile.lines`, in a coroutine; returns how many,
/// and the highest resident memory (bytes) seen while reading.
func b3Covenant(path: String, queue: DispatchQueue) -> (lines: Int, peakResident: Int) {
  let result = Box((0, 0))
  runInCoroutine(on: queue) {
    var count = 0
    var peak = 0
    for line in try CoFile.lines(atPath: path) {
      count &+= 1
      blackHole(line)
      if count & 0xFFFF == 0 { peak = max(peak, procStatusBytes("VmRSS") ?? 0) }
    }
    result.value = (count, peak)
  }
  return result.value
}

/// B3 (baseline): the lines of `path` with `getline`, each made a `String` as B3 does.
func b3Baseline(path: String) -> (lines: Int, peakResident: Int) {
  guard let file = fopen(path, "r") else { return (0, 0) }
  defer { fclose(file) }
  var line: UnsafeMutablePointer<CChar>?
  var capacity = 0
  defer { free(line) }
  var count = 0
  var peak = 0
  while true {
    let length = getline(&line, &capacity, file)
    if length < 0 { break }
    let bytes = UnsafeRawBufferPointer(start: line, count: length > 0 ? length - 1 : 0)
    blackHole(String(decoding: bytes, as: UTF8.self))
    count &+= 1
    if count & 0xFFFF == 0 { peak = max(peak, procStatusBytes("VmRSS") ?? 0) }
  }
  return (count, peak)
}

/// Runs `body` in a coroutine on `queue` and waits for it; a failure stops the run.
private func runInCoroutine(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> Void)
{
  let done = DispatchSemaphore(value: 0)
  let failure = Box<(any Error)?>(nil)
  queue.startCoroutine {
    defer { done.signal() }
    do { try body() } catch { failure.value = error }
  }
  done.wait()
  if let error = failure.value { fatalError("system benchmark failed: \(error)") }
}

/// A file of 1 KiB for B2, made once per run (removed at exit).
let b2File: String = {
  let path = NSTemporaryDirectory() + "covenant-b2-\(getpid())"
  _ = FileManager.default.createFile(
    atPath: path, contents: Data((0..<1024).map { UInt8(truncatingIfNeeded: $0) }))
  atexit { unlink(NSTemporaryDirectory() + "covenant-b2-\(getpid())") }
  return path
}()

/// Writes a file of at least `size` bytes of 80-byte lines (79 characters and `\n`) for B3;
/// returns its path and how many lines it has.
func makeLinesFile(size: Int) -> (path: String, lines: Int) {
  let path = NSTemporaryDirectory() + "covenant-b3-\(getpid())"
  let line = Array(String(repeating: "0123456789", count: 8).utf8.prefix(79)) + [0x0A]
  let linesPerBlock = (1 << 20) / line.count
  let block = Data((0..<linesPerBlock).flatMap { _ in line })
  _ = FileManager.default.createFile(atPath: path, contents: nil)
  let handle = FileHandle(forWritingAtPath: path)!
  var blocks = 0
  while blocks * block.count < size {
    handle.write(block)
    blocks += 1
  }
  try? handle.close()
  return (path, blocks * linesPerBlock)
}

// MARK: - Timed comparisons

func benchB1(_ effort: Effort) {
  let count = effort.scaled(20_000, quick: 5_000)
  let queue = DispatchQueue(label: "bench.b1")
  let pool = BlockingPool(threads: 8)
  let result = compare(
    effort, covenant: { timePerOp(count) { b1Covenant(count, queue: queue, pool: pool) } },
    baseline: { timePerOp(count) { b1Baseline(count, queue: queue) } })
  noteSamples("B1", result)
  report(
    "B1", covenant: formatNanos(result.covenant), baselineName: "DispatchQueue.global().await",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: atMost(1.5),
    pass: result.ratio <= 1.5)
}

/// B2: one coroutine reading in a loop waits for two thread wake-ups per read on either side
/// (the pool thread, then its own queue's), so the ratio is near 1 by construction: its target
/// leaves room for that noise. B2' (16 coroutines at once) keeps the pool busy and shows the
/// cost of the reads themselves, which must not exceed Foundation's.
func benchB2(_ effort: Effort) {
  let count = effort.scaled(20_000, quick: 4_000)
  let queue = DispatchQueue(label: "bench.b2")
  let path = b2File
  let result = compare(
    effort, covenant: { timePerOp(count) { b2Covenant(count, path: path, queue: queue) } },
    baseline: { timePerOp(count) { b2Baseline(count, path: path, queue: queue) } })
  noteSamples("B2", result)
  report(
    "B2", covenant: readsPerSecond(result.covenant), baselineName: "Data(contentsOf:) on the pool",
    baseline: readsPerSecond(result.baseline), ratio: result.ratio, target: atMost(1.1),
    pass: result.ratio <= 1.1, extra: ["per read: \(formatNanos(result.covenant))"])
  let concurrent = DispatchQueue(label: "bench.b2.concurrent", attributes: .concurrent)
  let width = 16
  let wide = compare(
    effort,
    covenant: {
      timePerOp(count) { b2ConcurrentCovenant(count, width: width, path: path, queue: concurrent) }
    },
    baseline: {
      timePerOp(count) { b2ConcurrentBaseline(count, width: width, path: path, queue: concurrent) }
    })
  noteSamples("B2'", wide)
  report(
    "B2'", covenant: readsPerSecond(wide.covenant),
    baselineName: "Data(contentsOf:) on the pool, \(width) coroutines",
    baseline: readsPerSecond(wide.baseline), ratio: wide.ratio, target: atMost(1.0),
    pass: wide.ratio <= 1.0)
}

func benchB3(_ effort: Effort) {
  let size = effort.quick ? 256 << 20 : 1 << 30
  let (path, lineCount) = makeLinesFile(size: size)
  defer { unlink(path) }
  let queue = DispatchQueue(label: "bench.b3")
  let megabytes = Double(lineCount * 80) / 1e6
  var covenantRate: [Double] = []
  var baselineRate: [Double] = []
  var covenantPeak = 0
  var baselinePeak = 0
  let before = procStatusBytes("VmRSS") ?? 0
  for round in 0..<(effort.quick ? 1 : 3) {
    for side in round % 2 == 0 ? [0, 1] : [1, 0] {
      let start = nowNanos()
      let (lines, peak) = side == 0 ? b3Covenant(path: path, queue: queue) : b3Baseline(path: path)
      let seconds = Double(nowNanos() - start) / 1e9
      precondition(lines == lineCount, "B3 read \(lines) lines of \(lineCount)")
      if side == 0 {
        covenantRate.append(megabytes / seconds)
        covenantPeak = max(covenantPeak, peak)
      } else {
        baselineRate.append(megabytes / seconds)
        baselinePeak = max(baselinePeak, peak)
      }
    }
  }
  let covenant = median(covenantRate)
  let baseline = median(baselineRate)
  let growth = max(0, covenantPeak - before)
  report(
    "B3", covenant: String(format: "%.0fMB/s", covenant), baselineName: "getline + String",
    baseline: String(format: "%.0fMB/s", baseline), ratio: baseline / covenant,
    target: "peak RSS growth ≤ 64MiB",
    pass: growth <= 64 << 20,
    extra: [
      String(format: "file=%.0fMiB", Double(size) / 1_048_576),
      String(
        format: "peakRSS=%.1fMiB (+%.1fMiB)", Double(covenantPeak) / 1_048_576,
        Double(growth) / 1_048_576),
      String(format: "baselinePeakRSS=%.1fMiB", Double(baselinePeak) / 1_048_576),
    ])
}

private func readsPerSecond(_ nanosecondsPerRead: Double) -> String {
  String(format: "%.0f/s", 1e9 / nanosecondsPerRead)
}
