import CovenantNIO
import NIOConcurrencyHelpers

/// Long-poll requests (`/poll`): each waits, suspended, until a `/release` request answers all
/// those waiting at the time. For measuring what a suspended request costs.
final class LongPoll: Sendable {
  private let gate = NIOLockedValueBox(CoPromise<Int>())
  private let waiting = NIOLockedValueBox(0)

  /// How many `/poll` requests are waiting now.
  var pending: Int { waiting.withLockedValue { $0 } }

  /// Suspends the calling coroutine until the next `release()`.
  func wait() throws -> String {
    let current = gate.withLockedValue { $0 }
    waiting.withLockedValue { $0 += 1 }
    defer { waiting.withLockedValue { $0 -= 1 } }
    let released = try current.await()
    return "Released with \(released) others.\n"
  }

  /// Answers every waiting request; returns how many were waiting.
  func release() -> Int {
    let count = pending
    let current = gate.withLockedValue { gate in
      defer { gate = CoPromise<Int>() }
      return gate
    }
    current.success(count)
    return count
  }
}

/// The server's one long-poll gate.
let longPoll = LongPoll()
