import Covenant
import Dispatch
import Foundation
import Synchronization

// D1: a coroutine snapshot of 100,000 suspended coroutines (issue "See inside"): under 1 s,
// while other coroutines go on running. Not a comparison: the "baseline" is the 1 s budget.

/// D1: 100,000 coroutines on one serial queue, each suspended in `await()` of one pending
/// promise (default settings: shared stacks, so most of them are copied out), and two
/// coroutines on a concurrent queue passing a value back and forth through a channel all along.
/// Times `CoroutineSnapshot.take()` (with backtraces), `take(backtraces: false)`, `dump()`,
/// `liveCount` and `writeDump` (to `/dev/null`), and counts the ping-pong rounds made while the
/// snapshot was being taken.
func benchD1(_ effort: Effort) {
  let count = 100_000
  let queue = DispatchQueue(label: "bench.d1")
  let gate = Promise<Int>()
  let finished = DispatchGroup()
  for _ in 0..<count {
    finished.enter()
    queue.startCoroutine {
      _ = try gate.await()
      finished.leave()
    }
  }
  queue.sync {}

  let ping = CoChannel<Int>(capacity: 0)
  let pong = CoChannel<Int>(capacity: 0)
  let rounds = RoundCounter()
  let players = DispatchQueue(label: "bench.d1.players", attributes: .concurrent)
  let playing = DispatchGroup()
  playing.enter()
  players.startCoroutine {
    while let value = try? ping.awaitReceive() { try pong.awaitSend(value + 1) }
    playing.leave()
  }
  playing.enter()
  players.startCoroutine {
    var value = 0
    while !rounds.stopped {
      try ping.awaitSend(value)
      value = try pong.awaitReceive()
      rounds.add()
    }
    ping.close()
    playing.leave()
  }

  var full: [Double] = []
  var light: [Double] = []
  var dumps: [Double] = []
  var listed = 0
  var roundsDuring: [Int] = []
  var counts: [Double] = []
  var counted = 0
  var written: [Double] = []
  let devNull = open("/dev/null", O_WRONLY)
  for _ in 0..<effort.scaled(5, quick: 2) {
    let before = rounds.value
    var start = nowNanos()
    let snapshot = CoroutineSnapshot.take()
    full.append(Double(nowNanos() - start))
    roundsDuring.append(rounds.value - before)
    listed = snapshot.coroutines.count
    start = nowNanos()
    _ = CoroutineSnapshot.take(backtraces: false)
    light.append(Double(nowNanos() - start))
    start = nowNanos()
    _ = snapshot.dump()
    dumps.append(Double(nowNanos() - start))
    start = nowNanos()
    counted = CoroutineSnapshot.liveCount
    counts.append(Double(nowNanos() - start))
    start = nowNanos()
    CoroutineSnapshot.writeDump(to: devNull)
    written.append(Double(nowNanos() - start))
  }
  close(devNull)
  rounds.stop()
  gate.fulfill(1)
  finished.wait()
  playing.wait()

  let median = { (values: [Double]) in values.sorted()[values.count / 2] }
  let fullTime = median(full)
  report(
    "D1", covenant: formatNanos(fullTime), baselineName: "budget", baseline: "1 s",
    ratio: fullTime / 1e9, target: "≤ 1.00",
    pass: fullTime <= 1e9 && listed >= count && counted >= count,
    extra: [
      "listed=\(listed)", "counted=\(counted)", "without-backtraces=\(formatNanos(median(light)))",
      "dump=\(formatNanos(median(dumps)))", "live-count=\(formatNanos(median(counts)))",
      "write-dump=\(formatNanos(median(written)))",
      "ping-pong-rounds-during-snapshot=\(roundsDuring.sorted()[roundsDuring.count / 2])",
    ])
}

/// Rounds of D1's ping-pong, and its stop flag.
final class RoundCounter: Sendable {
  private let count = Atomic<Int>(0)
  private let isStopped = Atomic<Bool>(false)
  func add() { count.add(1, ordering: .relaxed) }
  var value: Int { count.load(ordering: .relaxed) }
  func stop() { isStopped.store(true, ordering: .relaxed) }
  var stopped: Bool { isStopped.load(ordering: .relaxed) }
}
