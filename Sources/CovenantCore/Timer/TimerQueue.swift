import Dispatch

/// The process's timers for dispatch queues, for the coroutines that run on them and for every
/// scheduler without timers of its own: one heap of deadlines (`DeadlineHeap`) behind one
/// `DispatchSourceTimer`, armed for the earliest deadline.
///
/// Why not `asyncAfter` per timer: a block given to `asyncAfter` cannot be withdrawn.
/// `DispatchWorkItem.cancel()` only stops it from running; the block, with everything it
/// captured (for a timed await, the coroutine and its stack), stays queued until its deadline.
/// Here cancelling takes the entry out of the heap at once, and arming and cancelling cost a
/// lock round trip and a heap insertion or removal, with no allocation when the entry is
/// reused (see `CoroutineTimerEntry`).
///
/// The dispatch timer is re-armed only when a new deadline comes before the one it is armed
/// for. Cancelling the first entry does not disarm it: it then fires early once, finds nothing
/// due and re-arms for the new first deadline. A steady stream of timeouts of the same length
/// that are cancelled before they expire therefore never touches the dispatch timer.
package enum TimerQueue {
  // `@unchecked Sendable`: only touched under `state`'s lock.
  private struct State: @unchecked Sendable {
    var heap = DeadlineHeap<TimerEntry>()
    /// The deadline the dispatch timer is armed for; `.max` when it is not armed.
    var armedDeadline = UInt64.max
    /// How many times the dispatch timer has fired (for tests: a timer that fires for nothing
    /// over and over shows here).
    var firings = 0
  }

  /// Statics rather than a shared instance: reaching them costs no reference counting.
  private static let state = InlineMutex(State())
  /// `nonisolated(unsafe)`: a dispatch source is thread-safe (libdispatch objects are), though
  /// its Swift overlay type is not marked `Sendable`; it is only re-armed under the lock.
  nonisolated(unsafe) private static let source: any DispatchSourceTimer = {
    let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Covenant.timers"))
    source.setEventHandler { fireDueEntries() }
    source.activate()
    return source
  }()

  /// The clock deadlines are read on (the uptime clock of `DispatchTime`).
  static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

  /// The latest deadline the dispatch timer can be armed for; later ones never come (they stay
  /// in the heap, unarmed, until cancelled). libdispatch reads a `dispatch_time_t` with bit 63
  /// set as a time on another clock (on Linux a deadline just past 2^63, such as a timeout of
  /// `.nanoseconds(.max)`, reads as a time that has passed: the timer fired at once, found
  /// nothing due and was re-armed for the same deadline, over and over), and caps uptime values at `DISPATCH_TIME_MAX_VALUE`, 2^62 − 1:
  /// 146 years of uptime, far beyond any real timeout.
  package static let latestDeadline: UInt64 = (1 << 62) - 1

  /// Arms `entry` (which must not be armed) to fire `nanoseconds` from now with `token`.
  static func arm(_ entry: TimerEntry, after nanoseconds: UInt64, token: UInt64) {
    arm(entry, at: now.adding(nanoseconds: nanoseconds), token: token)
  }

  /// Arms `entry` (which must not be armed) to fire at `deadline` (on the clock of `now`) with
  /// `token`.
  static func arm(_ entry: TimerEntry, at deadline: UInt64, token: UInt64) {
    state.withCriticalSection { state in
      entry.token = token
      state.heap.insert(entry, deadline: deadline)
      rearmIfEarlier(deadline, &state)
    }
  }

  /// Takes `entry` out if it is still armed; returns false if it has fired (or is firing).
  @discardableResult
  static func disarm(_ entry: TimerEntry) -> Bool {
    state.withCriticalSection { $0.heap.remove(entry) }
  }

  /// Points the dispatch timer at `deadline` if that comes before what it is armed for. Called
  /// with the lock held, so that the dispatch timer's deadline always matches `armedDeadline`.
  private static func rearmIfEarlier(_ deadline: UInt64, _ state: inout State) {
    // A deadline past `latestDeadline` (`.max` included) never comes: nothing to arm.
    guard deadline < state.armedDeadline, deadline <= latestDeadline else { return }
    state.armedDeadline = deadline
    source.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
  }

  /// The dispatch timer's handler: fires every entry that is due, one at a time (each taken out
  /// under the lock and fired without it), then re-arms for the next deadline.
  private static func fireDueEntries() {
    let now = Self.now
    state.withCriticalSection { state in
      state.armedDeadline = .max  // a one-shot timer that has fired
      state.firings += 1
    }
    while let (entry, token) = state.withCriticalSection({ state -> (TimerEntry, UInt64)? in
      state.heap.popFirst(dueBy: now).map { ($0.entry, $0.entry.token) }
    }) {
      entry.fire(token: token)
    }
    state.withCriticalSection { state in
      if let next = state.heap.firstDeadline { rearmIfEarlier(next, &state) }
    }
  }

  /// How many times the dispatch timer has fired since the process started, and the deadline it
  /// is armed for (`nil`: not armed). For tests.
  package static var statistics: (firings: Int, armedDeadline: UInt64?) {
    state.withCriticalSection { ($0.firings, $0.armedDeadline == .max ? nil : $0.armedDeadline) }
  }
}
