import NIOCore

/// The same handler as CovenantHTTPExample's, with async/await: a rate-limiter token, then two
/// back-end calls answered by 1 ms timers on the connection's event loop.
struct AsyncHandler: Sendable {
  let limiter: AsyncRateLimiter
  let backends: AsyncBackends

  func respond(to path: String, on loop: any EventLoop) async throws -> String {
    switch path {
    case "/slow": return try await slow(on: loop)
    case "/poll": return await asyncLongPoll.wait()
    case "/release": return "released \(asyncLongPoll.release())\n"
    case "/pending": return "pending \(asyncLongPoll.pending)\n"
    default: break
    }
    try await limiter.acquire()
    let user = try await backends.fetchUser(id: path.utf8.count, on: loop).get()
    let quote = try await backends.fetchQuote(for: user, on: loop)
    return "Hello, \(user)! Today's number is \(quote).\n"
  }
}

extension AsyncHandler {
  /// CovenantHTTPExample's `/slow` in async/await: the back-end call raced against a 30 s
  /// sleep in a task group, the loser cancelled.
  func slow(on loop: any EventLoop) async throws -> String {
    let quote = try await withThrowingTaskGroup(of: Int?.self) { group in
      group.addTask { try await backends.fetchQuote(for: "slow", on: loop) }
      group.addTask {
        try await Task.sleep(nanoseconds: 30_000_000_000)
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let value = first else {
        throw AsyncTimeout()
      }
      return value
    }
    return "Slow answer: \(quote).\n"
  }
}

struct AsyncTimeout: Error {}

/// The two simulated back-end calls: an `EventLoopFuture` (NIO style) and a continuation
/// resumed by a loop timer (callback style), each after 1 ms.
struct AsyncBackends: Sendable {
  static let latency = TimeAmount.milliseconds(1)

  func fetchUser(id: Int, on loop: any EventLoop) -> EventLoopFuture<String> {
    loop.scheduleTask(in: Self.latency) { "user\(id)" }.futureResult
  }

  func fetchQuote(for user: String, on loop: any EventLoop) async throws -> Int {
    let value = user.utf8.count * 7
    return await withCheckedContinuation { continuation in
      loop.scheduleTask(in: Self.latency) { continuation.resume(returning: value) }
    }
  }
}
