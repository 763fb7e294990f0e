import Covenant
import Dispatch
import Synchronization

// S1, S2: CoMutex, uncontended and handed over between coroutines, against Synchronization's
// Mutex and an AsyncSemaphore-style actor (what Swift code writes by hand for a lock that
// suspends). Targets (no SPEC id has one): S1 ≤ 4 × Mutex (a lock and an unlock are two round
// trips on a Mutex, plus the holder bookkeeping), S1' and S2 at most the actor's cost and half
// of it.

// MARK: - Workloads

/// S1 (covenant): `n` uncontended `lock()` + `unlock()` of a `CoMutex`, inside one coroutine.
func s1Covenant(_ n: Int, queue: DispatchQueue) {
  let mutex = CoMutex()
  let done = DispatchSemaphore(value: 0)
  queue.startCoroutine {
    for _ in 0..<n {
      try mutex.lock()
      mutex.unlock()
    }
    done.signal()
  }
  done.wait()
}

/// S1 (baseline): `n` uncontended `withLock {}` of a `Synchronization.Mutex`.
func s1Mutex(_ n: Int) {
  let mutex = Mutex(0)
  for _ in 0..<n { mutex.withLock { $0 &+= 1 } }
  blackHole(mutex.withLock { $0 })
}

/// S1' (baseline): `n` uncontended `wait()` + `signal()` of an `AsyncSemaphore`-style actor
/// with one permit, inside one task.
func s1Actor(_ n: Int) {
  runBlocking {
    let semaphore = ActorSemaphore(value: 1)
    for _ in 0..<n {
      await semaphore.wait()
      await semaphore.signal()
    }
  }
}

/// S2 (covenant): two coroutines on one serial queue each take a `CoMutex` `n / 2` times and
/// yield while holding it, so every acquisition waits and is handed over by the other's
/// `unlock()`. Per acquisition.
func s2Covenant(_ n: Int, queue: DispatchQueue) {
  let mutex = CoMutex()
  let done = DispatchGroup()
  for _ in 0..<2 {
    done.enter()
    queue.startCoroutine {
      defer { done.leave() }
      for _ in 0..<(n / 2) {
        try mutex.withLock { try Coroutine.yield() }
      }
    }
  }
  done.wait()
}

/// S2 (baseline): the same with two tasks, the actor semaphore and `Task.yield()`.
func s2Actor(_ n: Int) {
  runBlocking {
    let semaphore = ActorSemaphore(value: 1)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<2 {
        group.addTask {
          for _ in 0..<(n / 2) {
            await semaphore.wait()
            await Task.yield()
            await semaphore.signal()
          }
        }
      }
    }
  }
}

/// The `AsyncSemaphore` Swift projects write by hand: an actor with a permit count and a FIFO
/// of continuations, `signal()` resuming the first waiter.
actor ActorSemaphore {
  private var value: Int
  private var waiters: [CheckedContinuation<Void, Never>] = []
  private var head = 0

  init(value: Int) { self.value = value }

  func wait() async {
    if value > 0 {
      value -= 1
      return
    }
    await withCheckedContinuation { waiters.append($0) }
  }

  func signal() {
    guard head < waiters.count else {
      value += 1
      return
    }
    let first = waiters[head]
    head += 1
    if head == waiters.count {
      waiters.removeAll(keepingCapacity: true)
      head = 0
    }
    first.resume()
  }
}

// MARK: - Timed comparisons

func benchS1(_ effort: Effort) {
  let count = effort.scaled(2_000_000, quick: 500_000)
  let queue = DispatchQueue(label: "bench.s1")
  let coMutex: () -> Double = { timePerOp(count) { s1Covenant(count, queue: queue) } }
  let mutex = compare(
    effort, covenant: coMutex, baseline: { timePerOp(count) { s1Mutex(count) } })
  noteSamples("S1", mutex)
  let actorCount = count / 10
  let actor = compare(
    effort, covenant: { timePerOp(actorCount) { s1Covenant(actorCount, queue: queue) } },
    baseline: { timePerOp(actorCount) { s1Actor(actorCount) } })
  noteSamples("S1'", actor)
  report(
    "S1", covenant: formatNanos(mutex.covenant), baselineName: "Mutex.withLock",
    baseline: formatNanos(mutex.baseline), ratio: mutex.ratio, target: "≤ 4.00",
    pass: mutex.ratio <= 4)
  report(
    "S1'", covenant: formatNanos(actor.covenant), baselineName: "actor semaphore",
    baseline: formatNanos(actor.baseline), ratio: actor.ratio, target: "≤ 1.00",
    pass: actor.ratio <= 1)
}

func benchS2(_ effort: Effort) {
  let count = effort.scaled(400_000, quick: 100_000)
  let queue = DispatchQueue(label: "bench.s2")
  let result = compare(
    effort, covenant: { timePerOp(count) { s2Covenant(count, queue: queue) } },
    baseline: { timePerOp(count) { s2Actor(count) } })
  noteSamples("S2", result)
  report(
    "S2", covenant: formatNanos(result.covenant), baselineName: "actor semaphore + Task.yield",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "≤ 0.50",
    pass: result.ratio <= 0.5)
}
