import NIOConcurrencyHelpers

/// CovenantHTTPExample's long-poll gate in async/await: each `/poll` request's task waits on a
/// continuation until `/release` resumes them all.
final class AsyncLongPoll: Sendable {
  private let waiters = NIOLockedValueBox<[CheckedContinuation<Int, Never>]>([])

  /// How many `/poll` requests are waiting now.
  var pending: Int { waiters.withLockedValue { $0.count } }

  /// Waits until the next `release()`.
  func wait() async -> String {
    let released = await withCheckedContinuation { continuation in
      waiters.withLockedValue { $0.append(continuation) }
    }
    return "Released with \(released - 1) others.\n"
  }

  /// Resumes every waiting request; returns how many were waiting.
  func release() -> Int {
    let waiting = waiters.withLockedValue { waiters in
      defer { waiters = [] }
      return waiters
    }
    for continuation in waiting { continuation.resume(returning: waiting.count) }
    return waiting.count
  }
}

/// The server's one long-poll gate.
let asyncLongPoll = AsyncLongPoll()
