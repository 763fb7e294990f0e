import Covenant
import CovenantNIO
import NIOCore

/// The request handler proper, in plain sequential style: it runs inside a coroutine on the
/// connection's event loop, and each `await` suspends the coroutine, never the loop.
struct Handler {
  let limiter: RateLimiter
  let backends: Backends

  func respond(to path: String, on loop: any EventLoop) throws -> String {
    try limiter.acquire()  // a CoChannel-fed token bucket: waits when over the rate
    let user = try backends.fetchUser(id: path.utf8.count, on: loop).await()  // EventLoopFuture
    let quote = try backends.fetchQuote(for: user, on: loop).await()  // Covenant Promise
    return "Hello, \(user)! Today's number is \(quote).\n"
  }
}
