import Covenant
import Dispatch
import NIOCore
import NIOPosix

// The workloads of the ids in Benchmarks/README.md, each a function of its operation count,
// for both sides. The timed benchmarks (PromiseBenchmarks, CoroutineBenchmarks,
// HandOffBenchmarks) and the noise-free counts (OperationCounts: allocations and instructions per operation) run the very
// same code.

/// One id's two sides: each runs `n` operations of the workload.
struct Workload {
  let id: String
  let covenant: (Int) -> Void
  let baseline: (Int) -> Void
  let baselineName: String
}

/// P1 (covenant): `n` × resolved promise + `then` on a serial queue, waiting for each block.
func p1Covenant(_ n: Int, queue: DispatchQueue, semaphore: DispatchSemaphore) {
  for i in 0..<n {
    Promise(i).then(on: queue) { _ in semaphore.signal() }
    semaphore.wait()
  }
}

/// P1 (baseline): `n` × `async` of the same block on the same queue.
func p1Baseline(_ n: Int, queue: DispatchQueue, semaphore: DispatchSemaphore) {
  for _ in 0..<n {
    queue.async { semaphore.signal() }
    semaphore.wait()
  }
}

/// P2 (covenant): `n` pending promises, each with a `then` on a concurrent queue, fulfilled;
/// until every block has run.
func p2Covenant(_ n: Int, queue: DispatchQueue, group: DispatchGroup) {
  var promises: [Promise<Int>] = []
  promises.reserveCapacity(n)
  for _ in 0..<n {
    let promise = Promise<Int>()
    group.enter()
    promise.then(on: queue) { _ in group.leave() }
    promises.append(promise)
  }
  for (i, promise) in promises.enumerated() { promise.fulfill(i) }
  group.wait()
}

/// P2 (baseline): the same blocks as bare `async`, bracketed by the same group.
func p2Baseline(_ n: Int, queue: DispatchQueue, group: DispatchGroup) {
  for _ in 0..<n {
    group.enter()
    queue.async { group.leave() }
  }
  group.wait()
}

/// P3 (covenant): a chain of `n` `then`s on a serial queue, built on a pending promise, then
/// fulfilled; until the last has resolved.
func p3Covenant(_ n: Int, queue: DispatchQueue) {
  let head = Promise<Int>()
  var last = head
  for _ in 0..<n { last = last.then(on: queue) { $0 &+ 1 } }
  head.fulfill(0)
  let value = try! awaitPromise(last)
  precondition(value == n)
}

/// P3 (baseline): a chain of `n` NIO `map`s, built and succeeded on the event loop.
func p3Baseline(_ n: Int, loop: any EventLoop) {
  let head = loop.makePromise(of: Int.self)
  let last = try! loop.submit { () -> EventLoopFuture<Int> in
    var last = head.futureResult
    for _ in 0..<n { last = last.map { $0 &+ 1 } }
    head.succeed(0)
    return last
  }.wait()
  let value = try! last.wait()
  precondition(value == n)
}

/// C1 (covenant): `n` empty coroutines on a serial queue, drained with `sync`.
func c1Covenant(_ n: Int, queue: DispatchQueue) {
  for _ in 0..<n { queue.startCoroutine {} }
  queue.sync {}
}

/// C1 (baseline): `n` empty `async` blocks on the same queue, drained the same way.
func c1Baseline(_ n: Int, queue: DispatchQueue) {
  for _ in 0..<n { queue.async {} }
  queue.sync {}
}

/// A1 (covenant): `n` awaits of an already-resolved `CoFuture` inside one coroutine.
func a1Covenant(_ n: Int, queue: DispatchQueue) {
  let future = CoFuture<Int>(result: .success(1))
  let done = DispatchSemaphore(value: 0)
  queue.startCoroutine {
    var sum = 0
    for _ in 0..<n { sum &+= try future.await() }
    blackHole(sum)
    done.signal()
  }
  done.wait()
}

/// A1 (baseline): `n` awaits of a finished value inside one Swift task.
func a1Baseline(_ n: Int) {
  runBlocking { await awaitFinishedTask(n) }
}

nonisolated func awaitFinishedTask(_ n: Int) async {
  let task = Task { 1 }
  _ = await task.value
  var sum = 0
  for _ in 0..<n { sum &+= await task.value }
  blackHole(sum)
}

/// C4 (covenant): `n` generator elements, outside any coroutine.
func c4Covenant(_ n: Int) {
  let generator = Generator<Int> { yield in
    var i = 0
    while true {
      try yield(i)
      i &+= 1
    }
  }
  var sum = 0
  for _ in 0..<n { sum &+= generator.next()! }
  blackHole(sum)
}

/// Every workload with an allocation or instruction budget, by id.
func makeWorkloads(loop: any EventLoop) -> [Workload] {
  let serial = DispatchQueue(label: "bench.counts.serial")
  let concurrent = DispatchQueue(label: "bench.counts.concurrent", attributes: .concurrent)
  let semaphore = DispatchSemaphore(value: 0)
  let group = DispatchGroup()
  // C6: two coroutines on one shared stack (each element copies one out and the other in),
  // against the same on two stacks.
  let oneStack = DispatchQueue(label: "bench.counts.one-stack")
  oneStack.coroutineSharedStackCount = 1
  let twoStacks = DispatchQueue(label: "bench.counts.two-stacks")
  twoStacks.coroutineSharedStackCount = 2
  let pool = BlockingPool(threads: 8)
  return [
    Workload(
      id: "B1", covenant: { b1Covenant($0, queue: serial, pool: pool) },
      baseline: { b1Baseline($0, queue: serial) }, baselineName: "DispatchQueue.global().await"),
    Workload(
      id: "B2", covenant: { b2Covenant($0, path: b2File, queue: serial) },
      baseline: { b2Baseline($0, path: b2File, queue: serial) },
      baselineName: "Data(contentsOf:) on the pool"),
    Workload(
      id: "P1", covenant: { p1Covenant($0, queue: serial, semaphore: semaphore) },
      baseline: { p1Baseline($0, queue: serial, semaphore: semaphore) },
      baselineName: "DispatchQueue.async"),
    Workload(
      id: "P2", covenant: { p2Covenant($0, queue: concurrent, group: group) },
      baseline: { p2Baseline($0, queue: concurrent, group: group) },
      baselineName: "DispatchGroup+async"),
    Workload(
      id: "P3", covenant: { p3Covenant($0, queue: serial) },
      baseline: { p3Baseline($0, loop: loop) }, baselineName: "NIO map"),
    Workload(
      id: "C1", covenant: { c1Covenant($0, queue: serial) },
      baseline: { c1Baseline($0, queue: serial) }, baselineName: "serial async"),
    Workload(
      id: "C2", covenant: { _ = coPromisePingPong(rounds: max(1, $0 / 2), on: serial) },
      baseline: { n in runBlocking { _ = await continuationPingPong(rounds: max(1, n / 2)) } },
      baselineName: "CheckedContinuation"),
    Workload(
      id: "T1",
      covenant: {
        _ = coPromisePingPong(rounds: max(1, $0 / 2), on: serial, timeout: .seconds(30))
      },
      baseline: { _ = coPromisePingPong(rounds: max(1, $0 / 2), on: serial) },
      baselineName: "C2 without timeout"),
    Workload(
      id: "S1", covenant: { s1Covenant($0, queue: serial) }, baseline: { s1Mutex($0) },
      baselineName: "Mutex.withLock"),
    Workload(
      id: "S1A", covenant: { s1Covenant($0, queue: serial) }, baseline: { s1Actor($0) },
      baselineName: "actor semaphore"),
    Workload(
      id: "S2", covenant: { s2Covenant($0, queue: serial) }, baseline: { s2Actor($0) },
      baselineName: "actor semaphore + Task.yield"),
    Workload(
      id: "C3", covenant: { _ = channelPingPong(rounds: max(1, $0 / 2), on: serial) },
      baseline: { n in runBlocking { _ = await asyncStreamPingPong(rounds: max(1, n / 2)) } },
      baselineName: "AsyncStream"),
    Workload(
      id: "C4", covenant: { c4Covenant($0) }, baseline: { _ = rawFiberRoundTrip($0) },
      baselineName: "fiber round trip"),
    Workload(
      id: "C7", covenant: { selectWorkload(.select, $0, queue: serial) },
      baseline: { selectWorkload(.awaitReceive, $0, queue: serial) }, baselineName: "awaitReceive"),
    Workload(
      id: "C7P", covenant: { selectWorkload(.unbiased, $0, queue: serial) },
      baseline: { selectWorkload(.poll, $0, queue: serial) }, baselineName: "poll"),
    Workload(
      id: "A1", covenant: { a1Covenant($0, queue: serial) }, baseline: { a1Baseline($0) },
      baselineName: "Task.value"),
    Workload(
      id: "C6",
      covenant: { _ = channelPingPong(rounds: max(1, $0 / 2), on: oneStack, paddingFrames: 8) },
      baseline: { _ = channelPingPong(rounds: max(1, $0 / 2), on: twoStacks, paddingFrames: 8) },
      baselineName: "same on two stacks"),
    Workload(
      id: "F1", covenant: { f1Chain($0, queue: serial) },
      baseline: { f1HandLoop($0, queue: serial) }, baselineName: "hand loop"),
    Workload(
      id: "F2", covenant: { f2Merge($0, queue: serial) },
      baseline: { f2HandSelect($0, queue: serial) }, baselineName: "hand select"),
    Workload(
      id: "F3", covenant: { f3Broadcast(max(1, $0 / f3Subscribers), queue: serial) },
      baseline: { f3HandFanOut(max(1, $0 / f3Subscribers), queue: serial) },
      baselineName: "hand fan-out"),
  ]
}
