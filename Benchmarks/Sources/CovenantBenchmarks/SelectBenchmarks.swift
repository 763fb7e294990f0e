import Covenant
import Dispatch

// C7: `CoChannel.select` with a ready case, against a plain `awaitReceive`.

/// The operation C7 measures, on channel `ready` (holding elements) with two empty channels
/// before it: the ready case is the last of the three, the most work for first-ready order.
enum SelectShape {
  /// `select` of three receive cases, the third one ready (C7 itself).
  case select
  /// `select` of the same three cases with the ready one first (context figure).
  case readyFirst
  /// `selectUnbiased` of the same three cases (context figure).
  case unbiased
  /// `awaitReceive()` on the ready channel (C7's baseline).
  case awaitReceive
  /// `poll()` on the ready channel (the floor: "the same work as a poll").
  case poll
  /// `poll()` on each of the three channels until one gives an element (what a select that
  /// locked every channel would at least cost).
  case threePolls
}

/// Runs `n` operations of `shape` inside one coroutine on `queue`, refilling the ready channel
/// with `offer` in blocks of 1,000 elements (outside the timed part); returns ns per operation
/// of the timed part.
@discardableResult
func selectWorkload(_ shape: SelectShape, _ n: Int, queue: DispatchQueue) -> Double {
  let quiet1 = CoChannel<Int>()
  let quiet2 = CoChannel<String>()
  let ready = CoChannel<Int>()
  let done = DispatchSemaphore(value: 0)
  let elapsed = Box<UInt64>(0)
  queue.startCoroutine {
    var sum = 0
    var left = n
    while left > 0 {
      let block = min(left, 1_000)
      for i in 0..<block { ready.offer(i) }
      let start = nowNanos()
      switch shape {
      case .select:
        for _ in 0..<block {
          sum &+= try CoChannel.select { select in
            select.onReceive(quiet1) { $0 }
            select.onReceive(quiet2) { $0.count }
            select.onReceive(ready) { $0 }
          }
        }
      case .readyFirst:
        for _ in 0..<block {
          sum &+= try CoChannel.select { select in
            select.onReceive(ready) { $0 }
            select.onReceive(quiet1) { $0 }
            select.onReceive(quiet2) { $0.count }
          }
        }
      case .unbiased:
        for _ in 0..<block {
          sum &+= try CoChannel.selectUnbiased { select in
            select.onReceive(quiet1) { $0 }
            select.onReceive(quiet2) { $0.count }
            select.onReceive(ready) { $0 }
          }
        }
      case .awaitReceive:
        for _ in 0..<block { sum &+= try ready.awaitReceive() }
      case .poll:
        for _ in 0..<block { sum &+= ready.poll()! }
      case .threePolls:
        for _ in 0..<block { sum &+= (quiet1.poll() ?? quiet2.poll()?.count ?? ready.poll()!) }
      }
      elapsed.value &+= nowNanos() - start
      left -= block
    }
    blackHole(sum)
    done.signal()
  }
  done.wait()
  return Double(elapsed.value) / Double(n)
}

/// C7: a `select` of three receive cases with one ready (the last), in a coroutine, against a
/// plain `awaitReceive` on the ready channel in the same run. Also prints, for context, the
/// same select with the ready case first, three `poll()`s, one `poll()` and `selectUnbiased`.
/// Per call.
func benchC7(_ effort: Effort) {
  let n = effort.scaled(200_000, quick: 50_000)
  let queue = DispatchQueue(label: "bench.c7")
  let result = compare(
    effort, repetitions: effort.scaled(21, quick: 7),
    covenant: { selectWorkload(.select, n, queue: queue) },
    baseline: { selectWorkload(.awaitReceive, n, queue: queue) })
  noteSamples("C7", result)
  let readyFirst = measure(effort) { selectWorkload(.readyFirst, n, queue: queue) }
  let threePolls = measure(effort) { selectWorkload(.threePolls, n, queue: queue) }
  let poll = measure(effort) { selectWorkload(.poll, n, queue: queue) }
  let unbiased = measure(effort) { selectWorkload(.unbiased, n, queue: queue) }
  report(
    "C7", covenant: formatNanos(result.covenant), baselineName: "awaitReceive",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "≤ 5.00",
    pass: result.ratio <= 5.0,
    extra: [
      "readyFirst=\(formatNanos(readyFirst))", "3polls=\(formatNanos(threePolls))",
      "poll=\(formatNanos(poll))", "selectUnbiased=\(formatNanos(unbiased))",
    ])
}
