import AsyncAlgorithms
import Covenant
import Dispatch

// F1–F3 (Benchmarks/README.md): stream operators on channel receivers.
//
// F1: a `map.filter.map` chain of three stages, per input element (half of them pass the
//     filter), against the same logic written by hand in a loop over one channel, and against
//     the same chain of the standard library's operators on an `AsyncStream`.
// F2: `CoChannel.merge` of four producers, per element, against swift-async-algorithms'
//     `merge` of four `AsyncChannel`s (the same shape: producers held back by the consumer).
// F3: a `BroadcastChannel` with 100 subscribers, per element per subscriber, against the same
//     fan-out written by hand over 100 channels, and swift-async-algorithms' `share()`.

// MARK: - F1

/// Elements offered to the source between timed blocks (the ring buffer keeps its storage).
let f1Block = 1_000

/// F1 (covenant): `n` elements through `receiver.map { x * 3 }.filter { even }.map { x + 1 }`,
/// received in a coroutine on `queue`; ns per input element (refills are not timed).
@discardableResult
func f1Chain(_ n: Int, queue: DispatchQueue) -> Double {
  let source = CoChannel<Int>()
  let chain = source.receiver.map { $0 &* 3 }.filter { $0 & 1 == 0 }.map { $0 &+ 1 }
  return f1Run(n, queue: queue, source: source) { passing in
    var sum = 0
    for _ in 0..<passing { sum &+= try chain.awaitReceive() }
    return sum
  }
}

/// F1 (baseline): the same logic written by hand in a loop over the channel.
@discardableResult
func f1HandLoop(_ n: Int, queue: DispatchQueue) -> Double {
  let source = CoChannel<Int>()
  return f1Run(n, queue: queue, source: source) { _ in
    var sum = 0
    for _ in 0..<f1Block {
      let tripled = try source.awaitReceive() &* 3
      if tripled & 1 == 0 { sum &+= tripled &+ 1 }
    }
    return sum
  }
}

/// Offers blocks of `f1Block` elements (0, 1, 2, …: every other one passes the filter) and
/// times `receive(passing)` on each, in one coroutine on `queue`.
private func f1Run(
  _ n: Int, queue: DispatchQueue, source: CoChannel<Int>,
  _ receive: @escaping (_ passing: Int) throws -> Int
) -> Double {
  let done = DispatchSemaphore(value: 0)
  let elapsed = Box<UInt64>(0)
  let blocks = max(1, n / f1Block)
  queue.startCoroutine {
    var sum = 0
    for _ in 0..<blocks {
      for value in 0..<f1Block { source.offer(value) }
      let start = nowNanos()
      sum &+= try receive(f1Block / 2)
      elapsed.value &+= nowNanos() - start
    }
    blackHole(sum)
    done.signal()
  }
  done.wait()
  return Double(elapsed.value) / Double(blocks * f1Block)
}

/// F1 (context): the same chain of the standard library's operators on an `AsyncStream`, in a
/// task; ns per input element.
nonisolated func f1AsyncStream(_ n: Int) async -> Double {
  let (stream, continuation) = AsyncStream<Int>.makeStream()
  var chain = stream.map { $0 &* 3 }.filter { $0 & 1 == 0 }.map { $0 &+ 1 }.makeAsyncIterator()
  let blocks = max(1, n / f1Block)
  var elapsed: UInt64 = 0
  var sum = 0
  for _ in 0..<blocks {
    for value in 0..<f1Block { continuation.yield(value) }
    let start = nowNanos()
    for _ in 0..<(f1Block / 2) { sum &+= await chain.next()! }
    elapsed &+= nowNanos() - start
  }
  continuation.finish()
  blackHole(sum)
  return Double(elapsed) / Double(blocks * f1Block)
}

func benchF1(_ effort: Effort) {
  let n = effort.scaled(1_000_000, quick: 200_000)
  let queue = DispatchQueue(label: "bench.f1")
  let result = compare(
    effort, repetitions: effort.scaled(21, quick: 7),
    covenant: { f1Chain(n, queue: queue) }, baseline: { f1HandLoop(n, queue: queue) })
  noteSamples("F1", result)
  let stream = measure(effort) { runBlocking { await f1AsyncStream(n) } }
  report(
    "F1", covenant: formatNanos(result.covenant), baselineName: "hand loop",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: atMost(1.2),
    pass: result.ratio <= 1.2,
    extra: [
      "AsyncStream=\(formatNanos(stream))",
      "vsAsyncStream=\(formatRatio(result.covenant / stream))",
    ])
}

// MARK: - F2

/// F2 (covenant): four producer coroutines each send `n / 4` elements into a channel of 16;
/// one consumer receives them from `CoChannel.merge` of the four; all on `queue`. ns per element.
@discardableResult
func f2Merge(_ n: Int, queue: DispatchQueue) -> Double {
  let each = max(1, n / 4)
  let sources = (0..<4).map { _ in CoChannel<Int>(capacity: 16) }
  let merged = CoChannel.merge(sources.map(\.receiver))
  let done = DispatchSemaphore(value: 0)
  let start = nowNanos()
  queue.startCoroutine {
    var sum = 0
    for value in merged.makeIterator() { sum &+= value }
    blackHole(sum)
    done.signal()
  }
  for source in sources {
    queue.startCoroutine {
      for value in 0..<each { try source.awaitSend(value) }
      source.close()
    }
  }
  done.wait()
  return Double(nowNanos() - start) / Double(4 * each)
}

/// F2 (context): the same, with the consumer's own `select` over the four channels instead of
/// `merge` (what the stage saves writing by hand).
@discardableResult
func f2HandSelect(_ n: Int, queue: DispatchQueue) -> Double {
  let each = max(1, n / 4)
  let sources = (0..<4).map { _ in CoChannel<Int>(capacity: 16) }
  let done = DispatchSemaphore(value: 0)
  let start = nowNanos()
  queue.startCoroutine {
    var sum = 0
    var open: [CoChannel<Int>?] = sources
    var left = 4
    while left > 0 {
      let (index, value): (Int, Int?) = try CoChannel.select { select in
        for index in 0..<4 {
          select.onReceiveResult(open[index]) { (index, try? $0.get()) }
        }
      }
      if let value {
        sum &+= value
      } else {
        open[index] = nil
        left -= 1
      }
    }
    blackHole(sum)
    done.signal()
  }
  for source in sources {
    queue.startCoroutine {
      for value in 0..<each { try source.awaitSend(value) }
      source.close()
    }
  }
  done.wait()
  return Double(nowNanos() - start) / Double(4 * each)
}

/// F2 (baseline): four producer tasks each send `n / 4` elements into an `AsyncChannel`; one
/// task receives them from swift-async-algorithms' `merge` (of two merges of two). ns per
/// element.
nonisolated func f2AsyncAlgorithms(_ n: Int) async -> Double {
  let each = max(1, n / 4)
  let channels = (0..<4).map { _ in AsyncChannel<Int>() }
  let start = nowNanos()
  for channel in channels {
    Task {
      for value in 0..<each { await channel.send(value) }
      channel.finish()
    }
  }
  var sum = 0
  let merged = merge(merge(channels[0], channels[1]), merge(channels[2], channels[3]))
  for await value in merged { sum &+= value }
  blackHole(sum)
  return Double(nowNanos() - start) / Double(4 * each)
}

func benchF2(_ effort: Effort) {
  let n = effort.scaled(400_000, quick: 100_000)
  let queue = DispatchQueue(label: "bench.f2")
  let result = compare(
    effort, repetitions: effort.scaled(11, quick: 5),
    covenant: { f2Merge(n, queue: queue) },
    baseline: { runBlocking { await f2AsyncAlgorithms(n) } })
  noteSamples("F2", result)
  let handSelect = measure(effort) { f2HandSelect(n, queue: queue) }
  report(
    "F2", covenant: formatNanos(result.covenant), baselineName: "async-algorithms merge",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "reported",
    pass: true,
    extra: ["handSelect=\(formatNanos(handSelect))"])
}

// MARK: - F3

/// Subscribers of F3.
let f3Subscribers = 100

/// F3 (covenant): one producer coroutine sends `n` elements to a `BroadcastChannel` (buffers
/// of 64, `.suspend`) with 100 subscriber coroutines; all on `queue`. ns per element per
/// subscriber.
@discardableResult
func f3Broadcast(_ n: Int, queue: DispatchQueue) -> Double {
  let broadcast = BroadcastChannel<Int>(capacity: 64)
  let subscribers = (0..<f3Subscribers).map { _ in broadcast.subscribe() }
  return f3Run(n, queue: queue, subscribers: subscribers) {
    for value in 0..<n { try broadcast.send(value) }
    broadcast.close()
  }
}

/// F3 (baseline): the same fan-out written by hand: the producer sends each element to 100
/// channels of 64.
@discardableResult
func f3HandFanOut(_ n: Int, queue: DispatchQueue) -> Double {
  let channels = (0..<f3Subscribers).map { _ in CoChannel<Int>(capacity: 64) }
  return f3Run(n, queue: queue, subscribers: channels.map(\.receiver)) {
    for value in 0..<n {
      for channel in channels { try channel.awaitSend(value) }
    }
    for channel in channels { channel.close() }
  }
}

private func f3Run(
  _ n: Int, queue: DispatchQueue, subscribers: [CoChannel<Int>.Receiver],
  produce: @escaping () throws -> Void
) -> Double {
  let done = DispatchGroup()
  let start = nowNanos()
  for subscriber in subscribers {
    done.enter()
    queue.startCoroutine {
      var sum = 0
      for value in subscriber.makeIterator() { sum &+= value }
      blackHole(sum)
      done.leave()
    }
  }
  queue.startCoroutine { try produce() }
  done.wait()
  return Double(nowNanos() - start) / Double(n * subscribers.count)
}

/// F3 (context): swift-async-algorithms' `share()` of an `AsyncStream` (buffer of 64) iterated
/// by 100 tasks. ns per element per subscriber.
nonisolated func f3Share(_ n: Int) async -> Double {
  let (stream, continuation) = AsyncStream<Int>.makeStream()
  let shared = stream.share(bufferingPolicy: .bounded(64))
  let start = nowNanos()
  await withTaskGroup(of: Int.self) { group in
    for _ in 0..<f3Subscribers {
      group.addTask {
        var sum = 0
        for await value in shared { sum &+= value }
        return sum
      }
    }
    for value in 0..<n { continuation.yield(value) }
    continuation.finish()
    for await sum in group { blackHole(sum) }
  }
  return Double(nowNanos() - start) / Double(n * f3Subscribers)
}

func benchF3(_ effort: Effort) {
  let n = effort.scaled(20_000, quick: 5_000)
  let queue = DispatchQueue(label: "bench.f3")
  let result = compare(
    effort, repetitions: effort.scaled(11, quick: 5),
    covenant: { f3Broadcast(n, queue: queue) }, baseline: { f3HandFanOut(n, queue: queue) })
  noteSamples("F3", result)
  let share = measure(effort) { runBlocking { await f3Share(n) } }
  report(
    "F3", covenant: formatNanos(result.covenant), baselineName: "hand fan-out",
    baseline: formatNanos(result.baseline), ratio: result.ratio, target: "reported",
    pass: true,
    extra: ["async-algorithms share=\(formatNanos(share))"])
}
