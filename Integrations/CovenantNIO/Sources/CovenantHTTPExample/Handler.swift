import CovenantNIO
import NIOCore

/// The request handler proper, in plain sequential style: it runs inside a coroutine on the
/// connection's event loop, and each `await` suspends the coroutine, never the loop.
struct Handler {
  let limiter: RateLimiter
  let backends: Backends
  /// The connection's loop, as a coroutine scheduler.
  let scheduler: EventLoopCoroutineScheduler
  /// Every loop of the server (for `/stats`).
  let loops: [any EventLoop]

  func respond(to path: String) throws -> String {
    switch path {
    case "/stats": return stats()
    case "/slow": return try slow()
    case "/poll": return try longPoll.wait()
    case "/release": return "released \(longPoll.release())\n"
    case "/pending": return "pending \(longPoll.pending)\n"
    default: break
    }
    try limiter.acquire()  // a CoChannel-fed token bucket: waits when over the rate
    let loop = scheduler.eventLoop
    let user = try backends.fetchUser(id: path.utf8.count, on: loop).await()  // EventLoopFuture
    let quote = try backends.fetchQuote(for: user, on: scheduler).await()  // Covenant Promise
    return "Hello, \(user)! Today's number is \(quote).\n"
  }

  /// A back-end call awaited with a generous timeout, the usual guard of a server's calls: the
  /// timer is the loop's, and it is cancelled as soon as the reply is in (so a finished
  /// request holds nothing until the 30 s would have passed).
  private func slow() throws -> String {
    let quote = try backends.fetchQuote(for: "slow", on: scheduler).await(timeout: .seconds(30))
    return "Slow answer: \(quote).\n"
  }

  /// How many requests were served and how many `execute` calls the coroutine schedulers of
  /// all loops made for them (the hops that were not avoided).
  private func stats() -> String {
    let executes = loops.reduce(0) { $0 + $1.coroutineScheduler.executeCalls }
    return "requests \(requestsServed.load(ordering: .relaxed)) executes \(executes)\n"
  }
}
