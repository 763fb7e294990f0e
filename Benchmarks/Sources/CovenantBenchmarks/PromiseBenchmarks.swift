import Covenant
import Dispatch
import NIOCore
import NIOPosix

// P1–P3: the promise core against Dispatch and SwiftNIO.

/// P1: resolved promise + one `then` on a serial queue, time until the block runs
/// (google/promises' benchmark), against a bare `async` on the same queue. Each iteration
/// creates a fulfilled promise, chains a `then` on the serial queue whose block signals a
/// semaphore, and waits on the semaphore; the baseline does `queue.async { signal }` + wait.
///
/// Each iteration is dominated by two thread wake-ups, whose latency on a shared machine varies
/// by an order of magnitude from second to second; so the iterations are measured in many short
/// blocks that alternate between the two sides, and each side's figure is its median block.
func benchP1(_ effort: Effort) {
  let iterations = 200
  let blocks = effort.scaled(201, quick: 61)
  let queue = DispatchQueue(label: "bench.p1")
  let semaphore = DispatchSemaphore(value: 0)

  let result = compare(
    effort, repetitions: blocks,
    covenant: {
      timePerOp(iterations) { p1Covenant(iterations, queue: queue, semaphore: semaphore) }
    },
    baseline: {
      timePerOp(iterations) { p1Baseline(iterations, queue: queue, semaphore: semaphore) }
    })
  noteSamples("P1", result)
  report(
    "P1", covenant: formatNanos(result.covenant), baselineName: "DispatchQueue.async",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: atMost(SpecTarget.p1),
    pass: result.ratio <= SpecTarget.p1)
}

/// P2: 10,000 pending promises, each with a `then` on a concurrent queue, then fulfilled; until
/// all blocks have run. Baseline: the same 10,000 blocks as bare `async` on the same concurrent
/// queue, each bracketed by the same `DispatchGroup` enter/leave. Per promise (per block).
func benchP2(_ effort: Effort) {
  let count = 10_000
  let queue = DispatchQueue(label: "bench.p2", attributes: .concurrent)
  let group = DispatchGroup()

  let result = compare(
    effort, repetitions: effort.scaled(21, quick: 11),
    covenant: { timePerOp(count) { p2Covenant(count, queue: queue, group: group) } },
    baseline: { timePerOp(count) { p2Baseline(count, queue: queue, group: group) } })
  noteSamples("P2", result)
  report(
    "P2", covenant: formatNanos(result.covenant), baselineName: "DispatchGroup+async",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: atMost(SpecTarget.p2),
    pass: result.ratio <= SpecTarget.p2)
}

/// P3: a chain of `length` `then`s on one serial queue, built on a pending promise, which is
/// then fulfilled; until the last has resolved. Baseline: the same chain of `map`s on an
/// `EventLoopPromise`'s future on one NIO event loop (built on the loop, as NIO code does),
/// succeeded, waited for. Per element, build + run.
func benchP3(_ effort: Effort, group: MultiThreadedEventLoopGroup) {
  let length = effort.scaled(1_000_000, quick: 200_000)
  let queue = DispatchQueue(label: "bench.p3")
  let loop = group.next()
  // Fewer repetitions: each one is a million-element chain.
  let p3Effort = Effort(quick: true)

  let result = compare(
    p3Effort,
    covenant: { timePerOp(length) { p3Covenant(length, queue: queue) } },
    baseline: { timePerOp(length) { p3Baseline(length, loop: loop) } })
  noteSamples("P3", result)
  report(
    "P3", covenant: formatNanos(result.covenant), baselineName: "NIO EventLoopFuture.map",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "≤ 1.00",
    pass: result.ratio <= 1.0, extra: ["chain=\(length)"])
}
