import CovenantNIO
import NIOConcurrencyHelpers

/// Long-poll requests (`/poll`): each waits, suspended, until a `/release` request answers all
/// those waiting at the time. For measuring what a suspended request costs.
final class LongPoll: Sendable {
  /// The gate the waiting requests await and how many await it, under one lock: a request that
  /// joins while `release()` runs is either counted and released, or waits for the next gate.
  private struct State {
    var gate = CoPromise<Int>()
    var waiting = 0
  }

  private let state = NIOLockedValueBox(State())

  /// How many `/poll` requests are waiting now.
  var pending: Int { state.withLockedValue { $0.waiting } }

  /// Suspends the calling coroutine until the next `release()`.
  func wait() throws -> String {
    let current = state.withLockedValue { state -> CoPromise<Int> in
      state.waiting += 1
      return state.gate
    }
    let released: Int
    do {
      released = try current.await()
    } catch {
      // Cancelled (the connection went away): no longer waiting, unless a release counted it.
      state.withLockedValue { if $0.gate === current { $0.waiting -= 1 } }
      throw error
    }
    return "Released with \(released - 1) others.\n"
  }

  /// Answers every waiting request; returns how many were waiting.
  func release() -> Int {
    let (current, count) = state.withLockedValue { state -> (CoPromise<Int>, Int) in
      defer { state = State() }
      return (state.gate, state.waiting)
    }
    current.success(count)
    return count
  }
}

/// The server's one long-poll gate.
let longPoll = LongPoll()
