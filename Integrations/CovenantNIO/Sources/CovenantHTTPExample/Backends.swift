import CovenantNIO
import NIOCore

/// Two simulated back-end calls, each answered by a 1 ms timer on the caller's event loop:
/// one in NIO style (an `EventLoopFuture`, as NIO clients return), one in Covenant style
/// (a `Promise`).
struct Backends: Sendable {
  static let latency = TimeAmount.milliseconds(1)

  /// A user name, as a NIO client would return it.
  func fetchUser(id: Int, on loop: any EventLoop) -> EventLoopFuture<String> {
    loop.scheduleTask(in: Self.latency) { "user\(id)" }.futureResult
  }

  /// A number for `user`, as a Covenant promise fulfilled by a loop timer. `withTurn` lets
  /// the coroutine waiting for it continue in the timer's own loop task.
  func fetchQuote(for user: String, on scheduler: EventLoopCoroutineScheduler) -> Promise<Int> {
    let promise = Promise<Int>.pending()
    let loop = scheduler.eventLoop
    let value = user.utf8.count * 7
    loop.scheduleTask(in: Self.latency) { scheduler.withTurn { promise.fulfill(value) } }
    return promise
  }
}
