// A small tour of Covenant: a promise pipeline on global queues (all, retry, timeout), then a
// coroutine that awaits the same kind of work sequentially without blocking its queue.
import Covenant
import Dispatch
import Foundation

// Command-line programs do not run the main queue: chain on a global queue instead.
DispatchQueue.promises = .global()

final class FlakyService: @unchecked Sendable {
  /// Fails the first `failures` calls, then answers.
  let failures: Int
  private let lock = NSLock()  // guards `calls`; NSLock is on every platform Covenant supports
  private var calls = 0

  init(failures: Int) { self.failures = failures }

  func fetch(_ name: String) -> Promise<String> {
    lock.lock()
    calls += 1
    let call = calls
    lock.unlock()
    let failures = failures
    return Promise<String>(on: .global()) { fulfill, reject in
      if call <= failures {
        reject(ExampleError.unavailable(name, attempt: call))
      } else {
        fulfill("\(name) (after \(call) call\(call == 1 ? "" : "s"))")
      }
    }
  }
}

enum ExampleError: Error, CustomStringConvertible {
  case unavailable(String, attempt: Int)
  var description: String {
    switch self {
    case .unavailable(let name, let attempt): return "\(name) unavailable on attempt \(attempt)"
    }
  }
}

func step(_ text: String) { print("• \(text)") }

// 1. Promises: three lookups in parallel, one of them flaky and retried, all under a timeout.
step("promises: fetching profile, settings and feed in parallel")
let flaky = FlakyService(failures: 2)
let profile = Promise<String>(on: .global()) { "profile" }
let settings = retry(attempts: 3, delay: 0.01) { flaky.fetch("settings") }
let feed = Promise<String>(on: .global()) { "feed" }.delay(0.02)

let page = all(profile, settings, feed)
  .timeout(2)
  .then { profile, settings, feed in "\(profile) + \(settings) + \(feed)" }
do {
  step("promises: page = \(try awaitPromise(page))")
} catch {
  step("promises: failed: \(error)")
}

// 2. Coroutines: the same kind of work written sequentially; `await` suspends the coroutine,
//    the serial queue stays free for other work meanwhile.
let queue = DispatchQueue(label: "example.coroutines")
let finished = DispatchSemaphore(value: 0)
queue.startCoroutine {
  defer { finished.signal() }
  do {
    let user = try Promise<String>(on: .global()) { "ada" }.await()
    step("coroutine: got user \(user)")
    let score: Int = try Coroutine.await { callback in
      DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { callback(user.count * 14) }
    }
    step("coroutine: callback API answered \(score)")
    let report = try DispatchQueue.global().await { "report for \(user): \(score) points" }
    step("coroutine: computed off-queue, now back on the serial queue")
    step("coroutine: \(report)")
  } catch {
    step("coroutine: failed: \(error)")
  }
}
finished.wait()

// 3. A generator: a lazy sequence computed on its own stack, no scheduler needed.
let fibonacci = Generator<Int> { yield in
  var (a, b) = (0, 1)
  while true {
    try yield(a)
    (a, b) = (b, a + b)
  }
}
step("generator: first Fibonacci numbers \(Array(fibonacci.prefix(10)))")

// 4. An actor: a coroutine owning its state, fed from many threads at once.
enum TallyMessage {
  case add(Int)
  case total(CoPromise<Int>)
}
let tally = DispatchQueue.global().actor(of: TallyMessage.self) { mailbox in
  var sum = 0
  for message in mailbox.makeIterator() {
    switch message {
    case .add(let amount): sum += amount
    case .total(let reply): reply.success(sum)
    }
  }
}
DispatchQueue.concurrentPerform(iterations: 10_000) { _ in _ = tally.offer(.add(1)) }

// 5. Futures and a channel, awaited from one coroutine.
let pipeline = DispatchQueue(label: "example.pipeline")
let summary = pipeline.coroutineFuture { () -> String in
  let channel = CoChannel<Int>(capacity: 1)
  DispatchQueue.global().startCoroutine {
    for value in 1...5 { try channel.awaitSend(value * value) }
    channel.close()
  }
  var squares: [Int] = []
  for square in channel.makeIterator() { squares.append(square) }
  let total = try tally.ask { .total($0) }.await()
  tally.close()
  return "channel delivered \(squares); actor summed \(total) additions sent from concurrentPerform"
}
do {
  step("coroutine future: \(try awaitFuture(summary))")
} catch {
  step("coroutine future: failed: \(error)")
}

// 6. Seeing inside: a live dump of every coroutine, as `kill -USR1 <pid>` would print after
//    `try CoroutineSnapshot.installDumpSignal()`. Three workers wait on a promise, a named
//    fetcher sleeps, a generator is parked in `yield`.
let workers = DispatchQueue(label: "example.workers")
let go = Promise<Int>()
let scope = CoScope()
for _ in 0..<3 { workers.startCoroutine(in: scope) { _ = try go.await() } }
workers.startCoroutine(in: scope, name: "fetcher") { try Coroutine.delay(.seconds(30)) }
let letters = Generator<Character> { yield in for letter in "abc" { try yield(letter) } }
_ = letters.next()
workers.sync {}
while CoroutineSnapshot.take(backtraces: false).waiting.count < 5 { usleep(1000) }
step("dump:\n\(CoroutineSnapshot.take().dump())")
go.fulfill(1)
scope.cancel()
try? scope.join()

step("all promises settled: \(waitForPromises(timeout: 5))")

/// Blocks this (non-coroutine) thread until `future` completes: fine in a command-line tool.
func awaitFuture<T>(_ future: CoFuture<T>) throws -> T {
  let done = DispatchSemaphore(value: 0)
  future.whenComplete { _ in done.signal() }
  done.wait()
  return try future.result!.get()
}
