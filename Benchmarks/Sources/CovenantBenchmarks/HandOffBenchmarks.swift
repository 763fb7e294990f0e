import CCoroutineContext
import Covenant
import Dispatch
import Synchronization

// C2–C4: suspension and resumption between coroutines, channels and generators, against Swift
// concurrency and the raw context switch.

// MARK: - C2: CoPromise hand-off

/// C2: two coroutines on one serial queue alternately fulfil a fresh `CoPromise` that the other
/// awaits. Each round a player creates its own promise and publishes it, fulfils the other's,
/// and awaits its own: one suspend + one resume per hand-off. Baseline: two Swift `Task`s doing
/// the same through `CheckedContinuation` (a mutex-guarded pair of slots). Per hand-off.
func benchC2(_ effort: Effort) {
  let rounds = effort.scaled(200_000, quick: 50_000)
  let queue = DispatchQueue(label: "bench.c2")

  let result = compare(
    effort, repetitions: effort.scaled(21, quick: 7),
    covenant: { coPromisePingPong(rounds: rounds, on: queue) },
    baseline: { runBlocking { await continuationPingPong(rounds: rounds) } })
  noteSamples("C2", result)
  let ratioPass = result.ratio <= SpecTarget.c2
  let absolutePass = result.covenant <= SpecTarget.c2Nanoseconds
  report(
    "C2", covenant: formatNanos(result.covenant),
    baselineName: "Task+CheckedContinuation", baseline: formatNanos(result.baseline),
    ratio: result.ratio, target: atMost(SpecTarget.c2), pass: ratioPass && absolutePass,
    extra: ratioPass && !absolutePass ? ["(C2' misses)"] : [])
  report(
    "C2'", covenant: formatNanos(result.covenant), baselineName: "absolute",
    baseline: formatNanos(SpecTarget.c2Nanoseconds),
    ratio: result.covenant / SpecTarget.c2Nanoseconds, target: atMost(1), pass: absolutePass)
}

/// Runs the CoPromise ping-pong; returns ns per hand-off. With a `timeout`, every await is an
/// `await(timeout:)` whose timer never fires (T1).
func coPromisePingPong(
  rounds: Int, on queue: DispatchQueue, timeout: DispatchTimeInterval? = nil
) -> Double {
  // Two slots touched only by the two coroutines, which share one serial queue: plain memory,
  // so the harness adds no exclusivity checks or array copy-on-write checks per hand-off.
  let slots = UnsafeMutablePointer<CoPromise<Int>?>.allocate(capacity: 2)
  slots.initialize(repeating: nil, count: 2)
  defer {
    slots.deinitialize(count: 2)
    slots.deallocate()
  }
  let shared = UncheckedPointer(slots)
  let done = DispatchGroup()
  func player(_ me: Int) {
    done.enter()
    queue.startCoroutine {
      defer { done.leave() }
      let slots = shared.pointer
      for round in 0..<rounds {
        let mine = CoPromise<Int>()
        slots[me] = mine
        if let theirs = slots[1 - me].take() { theirs.success(round) }
        if let timeout { _ = try mine.await(timeout: timeout) } else { _ = try mine.await() }
      }
      // The other player's last await is answered by nobody else.
      slots[1 - me].take()?.success(-1)
    }
  }
  let start = nowNanos()
  player(0)
  player(1)
  done.wait()
  // Two players × rounds awaits, each ended by one hand-off.
  return Double(nowNanos() - start) / Double(2 * rounds)
}

/// A pointer handed to coroutines that share one serial queue.
struct UncheckedPointer<T>: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<T>
  init(_ pointer: UnsafeMutablePointer<T>) { self.pointer = pointer }
}

/// The baseline of C2: two detached tasks ping-ponging through `CheckedContinuation`s kept in a
/// mutex-guarded pair of slots; ns per hand-off.
nonisolated func continuationPingPong(rounds: Int) async -> Double {
  let slots = Mutex<[CheckedContinuation<Void, Never>?]>([nil, nil])
  @Sendable func player(_ me: Int) async {
    for _ in 0..<rounds {
      await withCheckedContinuation { (mine: CheckedContinuation<Void, Never>) in
        let theirs = slots.withLock { slots -> CheckedContinuation<Void, Never>? in
          slots[me] = mine
          defer { slots[1 - me] = nil }
          return slots[1 - me]
        }
        theirs?.resume()
      }
    }
    slots.withLock { slots -> CheckedContinuation<Void, Never>? in
      defer { slots[1 - me] = nil }
      return slots[1 - me]
    }?.resume()
  }
  let start = nowNanos()
  async let a: Void = player(0)
  async let b: Void = player(1)
  _ = await (a, b)
  return Double(nowNanos() - start) / Double(2 * rounds)
}

// MARK: - C3: CoChannel ping-pong

/// C3: `CoChannel<Int>(bufferType: .buffered(capacity: 1))` ping-pong between two coroutines
/// on one serial queue: A sends on `ping` and receives on `pong`, B the other way round.
/// Baseline: the same between two tasks over two `AsyncStream<Int>`s. Per element (message).
func benchC3(_ effort: Effort) {
  let rounds = effort.scaled(200_000, quick: 50_000)
  let queue = DispatchQueue(label: "bench.c3")
  let result = compare(
    effort, repetitions: effort.scaled(21, quick: 7),
    covenant: { channelPingPong(rounds: rounds, on: queue) },
    baseline: { runBlocking { await asyncStreamPingPong(rounds: rounds) } })
  noteSamples("C3", result)
  report(
    "C3", covenant: formatNanos(result.covenant), baselineName: "AsyncStream",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "≤ 0.10",
    pass: result.ratio <= 0.1)
}

/// Runs the channel ping-pong; returns ns per element. `paddingFrames` puts that many 128-byte
/// frames below each coroutine's loop (C6's Swift workload: with its queue's
/// `coroutineSharedStackCount` at 1, both coroutines share one stack and every element copies
/// one out and the other in; at 2, nothing is copied).
func channelPingPong(rounds: Int, on queue: DispatchQueue, paddingFrames: Int = 0) -> Double {
  let ping = CoChannel<Int>(bufferType: .buffered(capacity: 1))
  let pong = CoChannel<Int>(bufferType: .buffered(capacity: 1))
  let done = DispatchGroup()
  let start = nowNanos()
  done.enter()
  queue.startCoroutine {
    defer { done.leave() }
    try belowPaddingFrames(paddingFrames) {
      for i in 0..<rounds {
        try ping.awaitSend(i)
        _ = try pong.awaitReceive()
      }
    }
  }
  done.enter()
  queue.startCoroutine {
    defer { done.leave() }
    try belowPaddingFrames(paddingFrames) {
      for _ in 0..<rounds {
        let value = try ping.awaitReceive()
        try pong.awaitSend(value)
      }
    }
  }
  done.wait()
  return Double(nowNanos() - start) / Double(2 * rounds)
}

/// Runs `body` below `levels` frames of 128 bytes of locals each (a fixed-size tuple, which
/// stays on the stack; a temporary allocation of that size may come from the heap). C6's Swift
/// workload pads each ping-pong coroutine with eight (about 1 KiB).
@inline(never)
func belowPaddingFrames(_ levels: Int, _ body: () throws -> Void) throws {
  if levels == 0 { return try body() }
  var frame = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
  withUnsafeMutablePointer(to: &frame) { blackHole($0) }
  try belowPaddingFrames(levels - 1, body)
  blackHole(frame.0)
}

/// The baseline of C3: two tasks ping-ponging over two `AsyncStream<Int>`s; ns per element.
nonisolated func asyncStreamPingPong(rounds: Int) async -> Double {
  let (ping, pingIn) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
  let (pong, pongIn) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
  let start = nowNanos()
  async let a: Void = {
    var replies = pong.makeAsyncIterator()
    for i in 0..<rounds {
      pingIn.yield(i)
      _ = await replies.next()
    }
    pingIn.finish()
  }()
  async let b: Void = {
    for await value in ping { pongIn.yield(value) }
    pongIn.finish()
  }()
  _ = await (a, b)
  return Double(nowNanos() - start) / Double(2 * rounds)
}

// MARK: - C4: Generator

/// C4: `Generator<Int>` elements pulled with `next()` outside any coroutine. Baselines: a raw
/// switch round trip through `cov_fiber_resume` / `cov_fiber_suspend` (the floor: one element
/// is one round trip), and a plain Swift `IteratorProtocol` behind an opaque call (for
/// context). Target: ≤ 1.3 × the round trip measured in the same run (and ≤ 25 ns absolute on a
/// quiet machine, printed). Per element.
func benchC4(_ effort: Effort) {
  let elements = effort.scaled(5_000_000, quick: 1_000_000)
  let result = compare(
    effort,
    covenant: {
      let generator = Generator<Int> { yield in
        var i = 0
        while true {
          try yield(i)
          i &+= 1
        }
      }
      return timePerOp(elements) {
        var sum = 0
        for _ in 0..<elements { sum &+= generator.next()! }
        blackHole(sum)
      }
    },
    baseline: { rawFiberRoundTrip(elements) })
  noteSamples("C4", result)
  let iterator = measure(effort) { plainIterator(elements) }
  report(
    "C4", covenant: formatNanos(result.covenant), baselineName: "cov_fiber round trip",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "≤ 1.30",
    pass: result.ratio <= 1.3,
    extra: [
      "absolute=\(formatNanos(result.covenant)) (≤ 25ns on a quiet machine)",
      "IteratorProtocol=\(formatNanos(iterator))",
    ])
}

@inline(never)
func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// ns per `cov_fiber_resume` + `cov_fiber_suspend` round trip, with no Swift layer in between
/// (the fiber's loop reads a plain C flag: no class, no exclusivity checks).
func rawFiberRoundTrip(_ count: Int) -> Double {
  let stop = UnsafeMutablePointer<Int>.allocate(capacity: 1)
  stop.initialize(to: 0)
  defer { stop.deallocate() }
  guard
    let fiber = cov_fiber_create(
      0,
      { raw in
        let stop = raw!.assumingMemoryBound(to: Int.self)
        while stop.pointee == 0 { cov_fiber_suspend() }
      }, UnsafeMutableRawPointer(stop))
  else { return .nan }
  cov_fiber_resume(fiber)  // first entry, not timed
  let perOp = timePerOp(count) {
    for _ in 0..<count { cov_fiber_resume(fiber) }
  }
  stop.pointee = 1
  cov_fiber_resume(fiber)
  precondition(cov_fiber_is_finished(fiber) != 0)
  cov_fiber_destroy(fiber)
  return perOp
}

/// An iterator the optimizer cannot see through (called through an existential).
struct CountingIterator: IteratorProtocol {
  var i = 0
  mutating func next() -> Int? {
    defer { i &+= 1 }
    return i
  }
}

@inline(never)
func makeOpaqueIterator() -> any IteratorProtocol<Int> { CountingIterator() }

/// ns per `next()` of a plain Swift iterator, through an existential.
func plainIterator(_ count: Int) -> Double {
  var iterator = makeOpaqueIterator()
  return timePerOp(count) {
    var sum = 0
    for _ in 0..<count { sum &+= iterator.next()! }
    blackHole(sum)
  }
}
