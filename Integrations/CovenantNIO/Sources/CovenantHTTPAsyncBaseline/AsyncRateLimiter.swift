import NIOCore
import Synchronization

/// The async/await counterpart of CovenantHTTPExample's CoChannel token bucket: refilled every
/// millisecond by a timer on its loop (up to `burst` stored); `acquire()` takes a token or
/// suspends the task until a refill hands it one, first come first served.
final class AsyncRateLimiter: Sendable {
  private struct State: ~Copyable {
    var tokens: Int
    var waiters: [CheckedContinuation<Void, Never>] = []
    var firstWaiter = 0
  }

  private let state: Mutex<State>

  init(loop: any EventLoop, tokensPerSecond: Int, burst: Int) {
    state = Mutex(State(tokens: burst))
    let perTick = max(1, tokensPerSecond / 1000)
    loop.scheduleRepeatedTask(initialDelay: .milliseconds(1), delay: .milliseconds(1)) {
      [weak self] _ in self?.refill(perTick, burst: burst)
    }
  }

  func acquire() async throws {
    let granted = state.withLock { state -> Bool in
      guard state.tokens > 0 else { return false }
      state.tokens -= 1
      return true
    }
    if granted { return }
    await withCheckedContinuation { continuation in
      let resumeNow = state.withLock { state -> Bool in
        if state.tokens > 0 {
          state.tokens -= 1
          return true
        }
        state.waiters.append(continuation)
        return false
      }
      if resumeNow { continuation.resume() }
    }
  }

  private func refill(_ count: Int, burst: Int) {
    let woken = state.withLock { state -> ArraySlice<CheckedContinuation<Void, Never>> in
      var available = count
      let waiting = state.waiters.count - state.firstWaiter
      let served = min(available, waiting)
      let woken = state.waiters[state.firstWaiter..<(state.firstWaiter + served)]
      state.firstWaiter += served
      if state.firstWaiter == state.waiters.count {
        state.waiters.removeAll(keepingCapacity: true)
        state.firstWaiter = 0
      }
      available -= served
      state.tokens = min(burst, state.tokens + available)
      return woken
    }
    for continuation in woken { continuation.resume() }
  }
}

/// The rate limiter of each loop of a group.
final class AsyncRateLimiters: Sendable {
  private let limiters: [ObjectIdentifier: AsyncRateLimiter]

  init(group: any EventLoopGroup, tokensPerSecondPerLoop: Int, burst: Int) {
    var limiters: [ObjectIdentifier: AsyncRateLimiter] = [:]
    for loop in group.makeIterator() {
      limiters[ObjectIdentifier(loop)] = AsyncRateLimiter(
        loop: loop, tokensPerSecond: tokensPerSecondPerLoop, burst: burst)
    }
    self.limiters = limiters
  }

  func limiter(for loop: any EventLoop) -> AsyncRateLimiter { limiters[ObjectIdentifier(loop)]! }
}
