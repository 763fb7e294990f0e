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
enum TimerQueue {
  private struct State: @unchecked Sendable {
    var heap = DeadlineHeap<TimerEntry>()
    /// The deadline the dispatch timer is armed for; `.max` when it is not armed.
    var armedDeadline = UInt64.max
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

  /// Arms `entry` (which must not be armed) to fire `nanoseconds` from now with `token`.
  static func arm(_ entry: TimerEntry, after nanoseconds: UInt64, token: UInt64) {
    let deadline = now.adding(nanoseconds: nanoseconds)
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
    // `.max` is a deadline that never comes: nothing to arm.
    guard deadline < state.armedDeadline, deadline != .max else { return }
    state.armedDeadline = deadline
    source.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
  }

  /// The dispatch timer's handler: fires every entry that is due, one at a time (each taken out
  /// under the lock and fired without it), then re-arms for the next deadline.
  private static func fireDueEntries() {
    let now = Self.now
    state.withCriticalSection { $0.armedDeadline = .max }  // a one-shot timer that has fired
    while let (entry, token) = state.withCriticalSection({ state -> (TimerEntry, UInt64)? in
      state.heap.popFirst(dueBy: now).map { ($0.entry, $0.entry.token) }
    }) {
      entry.fire(token: token)
    }
    state.withCriticalSection { state in
      if let next = state.heap.firstDeadline { rearmIfEarlier(next, &state) }
    }
  }
}
