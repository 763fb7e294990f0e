import Covenant
import Dispatch

// C1: starting coroutines, against bare `async` blocks and against TaskGroup child tasks.

/// C1: start `count` coroutines with an empty body on one serial queue and wait until all have
/// finished (a final `queue.sync {}` drains the FIFO queue, so every coroutine has run, ended
/// and given its stack back). Baseline: `count` empty `async` blocks on the same serial queue,
/// drained the same way. Second baseline: `count` empty child tasks of a `withTaskGroup` in a
/// nonisolated async function. Per coroutine / block / task.
func benchC1(_ effort: Effort) {
  let count = 100_000
  let queue = DispatchQueue(label: "bench.c1")

  let coroutines: () -> Double = { timePerOp(count) { c1Covenant(count, queue: queue) } }
  let primary = compare(
    effort, repetitions: effort.scaled(21, quick: 7), covenant: coroutines,
    baseline: { timePerOp(count) { c1Baseline(count, queue: queue) } })
  noteSamples("C1", primary)
  let secondary = compare(
    effort, repetitions: effort.scaled(21, quick: 7), covenant: coroutines,
    baseline: { runBlocking { await taskGroupChildren(count) } })
  noteSamples("C1'", secondary)

  let primaryPass = primary.ratio <= SpecTarget.c1
  let secondaryPass = secondary.ratio <= SpecTarget.c1TaskGroup
  report(
    "C1", covenant: formatNanos(primary.covenant), baselineName: "serial DispatchQueue.async",
    baseline: formatNanos(primary.baseline), ratio: primary.ratio, target: atMost(SpecTarget.c1),
    pass: primaryPass && secondaryPass,
    extra: primaryPass && !secondaryPass ? ["(C1' misses)"] : [])
  report(
    "C1'", covenant: formatNanos(secondary.covenant), baselineName: "TaskGroup child task",
    baseline: formatNanos(secondary.baseline), ratio: secondary.ratio,
    target: atMost(SpecTarget.c1TaskGroup),
    pass: secondaryPass)
}

/// `count` empty child tasks of a task group, in a nonisolated async context; ns per task.
nonisolated func taskGroupChildren(_ count: Int) async -> Double {
  let start = nowNanos()
  await withTaskGroup(of: Void.self) { group in
    for _ in 0..<count { group.addTask {} }
  }
  return Double(nowNanos() - start) / Double(count)
}
