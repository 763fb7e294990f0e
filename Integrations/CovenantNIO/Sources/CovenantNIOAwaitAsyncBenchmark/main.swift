import CovenantNIO
import Dispatch
import NIOCore
import NIOPosix

#if canImport(Glibc)
  import Glibc
#endif

// CovenantNIOAwaitAsyncBenchmark (X1): `Coroutine.awaitAsync` of an async function that returns
// at once, from a coroutine on an event loop, with the loop's scheduler as the task's executor
// (`TaskExecutorScheduler`) against the global-executor path (the same loop behind a scheduler
// that does not conform: the path before task executors, and every other scheduler's).
//
//   swift run -c release --package-path Integrations/CovenantNIO CovenantNIOAwaitAsyncBenchmark
//
// Prints, for each path, wall time per call, the loop's `execute` calls per call
// (`executeCalls`), and thread changes per call: whether the task ran on the loop thread
// against the coroutine before the call, plus the coroutine after it against the task (the
// coroutine always runs on the loop thread: a task off the loop is two changes).

let calls = 50_000
let runs = 5

/// The loop's scheduler behind a scheduler that is not a `TaskExecutorScheduler`: coroutines
/// run on the same loop, in the same turns, but `Coroutine.awaitAsync` uses the global executor.
final class NonExecutorLoopScheduler: CoroutineScheduler, @unchecked Sendable {
  let inner: EventLoopCoroutineScheduler
  init(_ inner: EventLoopCoroutineScheduler) { self.inner = inner }
  func scheduleTask(_ task: @escaping () -> Void) { inner.scheduleTask(task) }
  func scheduleTask(after delay: DispatchTimeInterval, _ task: @escaping () -> Void)
    -> any CoroutineTimer
  {
    inner.scheduleTask(after: delay, task)
  }
}

/// The preloaded malloc counter's count (`cov_allocation_count`, counting switched on), if any.
let allocationCount: (@convention(c) () -> Int64)? = {
  #if canImport(Glibc)
    guard let count = dlsym(nil, "cov_allocation_count"),
      let switchOn = dlsym(nil, "cov_allocation_counting")
    else { return nil }
    unsafeBitCast(switchOn, to: (@convention(c) (Int32) -> Void).self)(1)
    return unsafeBitCast(count, to: (@convention(c) () -> Int64).self)
  #else
    return nil
  #endif
}()

struct Figures {
  var allocationsPerCall: Double
  var nanosecondsPerCall: Double
  var executesPerCall: Double
  var threadChangesPerCall: Double
}

/// One run of `calls` calls from a coroutine on `scheduler` (whose coroutines run on `loop`).
func measure(_ loop: any EventLoop, _ scheduler: any CoroutineScheduler) -> Figures {
  let counters = loop.coroutineScheduler
  let done = DispatchSemaphore(value: 0)
  nonisolated(unsafe) var figures = Figures(
    allocationsPerCall: 0, nanosecondsPerCall: 0, executesPerCall: 0, threadChangesPerCall: 0)
  scheduler.startCoroutine {
    // Warm-up: the first tasks create the executor's and the runtime's state.
    for _ in 0..<1_000 { _ = try Coroutine.awaitAsync { () async in 1 } }
    let executesBefore = counters.executeCalls
    var changes = 0
    let allocationsBefore = allocationCount?() ?? 0
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<calls {
      let before = loop.inEventLoop
      let inTask = try Coroutine.awaitAsync { () async in loop.inEventLoop }
      let after = loop.inEventLoop
      if before != inTask { changes += 1 }
      if inTask != after { changes += 1 }
    }
    let elapsed = clock.now - start
    let allocations = (allocationCount?() ?? 0) - allocationsBefore
    let nanoseconds =
      Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    figures = Figures(
      allocationsPerCall: Double(allocations) / Double(calls),
      nanosecondsPerCall: nanoseconds / Double(calls),
      executesPerCall: Double(counters.executeCalls - executesBefore) / Double(calls),
      threadChangesPerCall: Double(changes) / Double(calls))
    done.signal()
  }
  done.wait()
  return figures
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let loop = group.next()
let paths: [(String, any CoroutineScheduler)] = [
  ("loop scheduler as TaskExecutor", loop.coroutineScheduler),
  ("global executor (non-conforming scheduler)", NonExecutorLoopScheduler(loop.coroutineScheduler)),
]
var medians: [Double] = []
print("X1: Coroutine.awaitAsync { 1 } from a coroutine on an event loop, \(calls) calls x \(runs)")
for (name, scheduler) in paths {
  let results = (0..<runs).map { _ in measure(loop, scheduler) }
  let time = median(results.map(\.nanosecondsPerCall))
  medians.append(time)
  let line =
    "  \(name): \(Int(time.rounded())) ns/call (median of \(runs)), "
    + "execute/call \(median(results.map(\.executesPerCall))), "
    + "thread changes/call \(median(results.map(\.threadChangesPerCall)))"
    + (allocationCount == nil
      ? "" : ", allocations/call \(median(results.map(\.allocationsPerCall)))")
  print(line)
}
print("  time ratio global/executor: \(((medians[1] / medians[0]) * 100).rounded() / 100)")
try group.syncShutdownGracefully()
