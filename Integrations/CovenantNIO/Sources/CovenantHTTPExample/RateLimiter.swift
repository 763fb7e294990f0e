import CovenantNIO
import NIOCore

/// A token bucket fed through a `CoChannel`: a coroutine on the loop puts tokens in every
/// millisecond (up to `burst` stored); each request takes one, suspending while there are
/// none. One per event loop, so requests and refills never leave their loop.
final class RateLimiter: Sendable {
  private let tokens: CoChannel<Void>

  init(loop: any EventLoop, tokensPerSecond: Int, burst: Int) {
    let tokens = CoChannel<Void>(capacity: burst)
    self.tokens = tokens
    let perTick = max(1, tokensPerSecond / 1000)
    while tokens.offer(()) {}  // start full
    loop.startCoroutine {
      // Ends when the loop shuts down: the await throws and the coroutine finishes.
      while true {
        try loop.scheduleTask(in: .milliseconds(1)) {}.futureResult.await()
        for _ in 0..<perTick where !tokens.offer(()) { break }
      }
    }
  }

  /// Takes one token, suspending the calling coroutine until one is available.
  func acquire() throws { try tokens.awaitReceive() }
}

/// The rate limiter of each loop of a group.
final class RateLimiters: Sendable {
  private let limiters: [ObjectIdentifier: RateLimiter]

  init(group: any EventLoopGroup, tokensPerSecondPerLoop: Int, burst: Int) {
    var limiters: [ObjectIdentifier: RateLimiter] = [:]
    for loop in group.makeIterator() {
      limiters[ObjectIdentifier(loop)] = RateLimiter(
        loop: loop, tokensPerSecond: tokensPerSecondPerLoop, burst: burst)
    }
    self.limiters = limiters
  }

  func limiter(for loop: any EventLoop) -> RateLimiter { limiters[ObjectIdentifier(loop)]! }
}
