import Covenant
import CovenantCore
import Dispatch

/// A scheduler with a virtual clock, for testing code that waits: coroutines started on it run
/// only when the test says so, on the test's own thread, and their delays and timeouts take
/// virtual time, which the test moves forward.
///
/// ```swift
/// func testGivesUpAfterThirtySeconds() throws {
///   let scheduler = TestScheduler()
///   let reply = CoPromise<String>()                 // never answered
///   let outcome = scheduler.coroutineFuture { try reply.await(timeout: .seconds(30)) }
///
///   scheduler.advance(by: .seconds(29))
///   XCTAssertNil(outcome.result)                    // still waiting
///   scheduler.advance(by: .seconds(1))
///   XCTAssertThrowsError(try outcome.result?.get()) // timed out, in microseconds of real time
/// }
/// ```
///
/// - **Time** starts at zero and moves only in `advance(by:)` and `advance(to:)`. `now` is the
///   virtual time elapsed since the scheduler was created.
/// - **Tasks** (`scheduleTask(_:)`: coroutine slices, hops, wake-ups) are due at the current
///   virtual time; timers (`scheduleTask(after:_:)`: `Coroutine.delay`, `await(timeout:)`,
///   `select` timeouts, `CoSemaphore.wait(timeout:)`, `CoScope.cancel(after:on:)`) are due when
///   their delay has passed. Nothing runs until the test calls `run()` or `advance`, which run
///   what is due on the calling thread, in order of due time and, among tasks due at the same
///   time, in the order they were scheduled. The same test therefore always runs the same way.
/// - **Everything Covenant has** works on it: coroutines, `CoScope`, futures and promises,
///   channels, `select`, `CoMutex`, `CoSemaphore`, generators. Work sent elsewhere (a
///   `DispatchQueue.global().await { }` hop, a promise fulfilled on another queue) runs in real
///   time on real threads; what it schedules back here waits for the next `run()` or `advance`.
///
/// Thread-safe: tasks may be scheduled from any thread. `run()` and `advance` must not be called
/// from one of the scheduler's own tasks (a precondition failure).
///
/// **End a test with its coroutines finished.** A coroutine keeps the scheduler it runs on, so
/// a `TestScheduler` that a test lets go while coroutines are queued or suspended on it (in a
/// `Coroutine.delay`, a timed wait, an await of something that never comes) is not freed: it
/// stays, with those coroutines and their stacks, and nothing runs them again. Run them to
/// completion (`advance` past their timers), or cancel them (start them in a `CoScope` and
/// cancel it) and call `run()` once more so that they unwind. `assertNoSuspendedCoroutines`
/// (or `expectNoSuspendedCoroutines`) lists the ones left, with what each waits for.
///
/// ```swift
/// let scope = CoScope()
/// scheduler.startCoroutine(in: scope) { try poll(every: .seconds(5)) }   // never ends
/// // … the test …
/// scope.cancel()
/// scheduler.run()                                   // the coroutine throws .canceled and ends
/// ```
public final class TestScheduler: CoroutineScheduler, @unchecked Sendable {
  // `@unchecked Sendable`: all mutable state is inside the mutex.
  private struct State: @unchecked Sendable {
    var heap = DeadlineHeap<VirtualTask>()
    var now: UInt64 = 0
    var isRunning = false
  }

  private let state = InlineMutex(State())

  /// Creates a scheduler whose clock reads zero.
  public init() {}

  deinit {
    // Tasks that never ran go with the scheduler (the heap holds them with a retain of its own).
    // None of them is a coroutine's: a coroutine queued or suspended here keeps the scheduler.
    _ = state.withCriticalSection { $0.heap.removeAll() }
  }

  /// The virtual time elapsed since the scheduler was created (`elapsed` is the same reading as
  /// a `Duration`).
  public var now: DispatchTimeInterval {
    .nanoseconds(Int(clamping: state.withCriticalSection { $0.now }))
  }

  /// The virtual time elapsed since the scheduler was created, as a `Duration`: `now` for
  /// `Duration` arithmetic and comparisons.
  ///
  /// ```swift
  /// scheduler.advance(by: .milliseconds(1500))
  /// XCTAssertEqual(scheduler.elapsed, .seconds(1.5))
  /// XCTAssertLessThan(scheduler.elapsed, timeout * 2)
  /// ```
  ///
  /// A property of its own rather than a second `now`: a property cannot be overloaded on its
  /// type, and `now` stays the `DispatchTimeInterval` it was.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  public var elapsed: Duration {
    Duration(nanoseconds: state.withCriticalSection { $0.now })
  }

  /// The number of tasks and timers not yet run (due now or later; cancelled timers do not
  /// count).
  public var pendingTaskCount: Int { state.withCriticalSection { $0.heap.count } }

  /// Queues `task` to run at the current virtual time, after everything already due by then.
  public func scheduleTask(_ task: @escaping () -> Void) {
    _ = enqueue(task, after: 0)
  }

  /// Queues `task` to run once `delay` of virtual time has passed (a negative delay counts as
  /// zero; `.never` never runs it). Cancelling the returned timer takes the task out at once.
  @discardableResult
  public func scheduleTask(
    after delay: DispatchTimeInterval, _ task: @escaping () -> Void
  ) -> any CoroutineTimer {
    guard let nanoseconds = delay.clampedNanoseconds else {
      return VirtualTask(task: nil, scheduler: nil)
    }
    return enqueue(task, after: nanoseconds)
  }

  /// Runs every task that is due at the current virtual time, including those they schedule for
  /// now, then returns. The clock does not move.
  public func run() {
    runTasks(until: nil)
  }

  /// Moves the clock forward by `interval`, running every task that falls due on the way at its
  /// due time (so `now`, read inside a task, is that task's due time), then the tasks due at
  /// the new time.
  ///
  /// - Precondition: `interval` is not negative and not `.never`.
  public func advance(by interval: DispatchTimeInterval) {
    guard let nanoseconds = interval.clampedNanoseconds, !interval.isNegative else {
      fatalError("TestScheduler.advance(by:) needs an interval of zero or more, not \(interval)")
    }
    runTasks(until: .relative(nanoseconds))
  }

  /// Moves the clock forward to `time` (virtual time since the scheduler was created), running
  /// every task that falls due on the way at its due time, then the tasks due at `time`.
  ///
  /// - Precondition: `time` is not earlier than `now`, and not `.never`.
  public func advance(to time: DispatchTimeInterval) {
    guard let nanoseconds = time.clampedNanoseconds, !time.isNegative else {
      fatalError("TestScheduler.advance(to:) needs a time of zero or more, not \(time)")
    }
    runTasks(until: .absolute(nanoseconds))
  }

  /// `advance(by:)` with a `Duration`: moves the clock forward by `duration`, running every task
  /// that falls due on the way at its due time, then the tasks due at the new time. Durations
  /// count in whole nanoseconds, rounded up (as the timers that coroutines arm with them).
  ///
  /// ```swift
  /// let backoff: Duration = .milliseconds(250)
  /// scheduler.advance(by: backoff * 3)
  /// ```
  ///
  /// Disfavoured against the `DispatchTimeInterval` form, so that `advance(by: .seconds(1))`
  /// keeps meaning what it meant.
  /// - Precondition: `duration` is not negative.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public func advance(by duration: Duration) {
    guard duration >= .zero else {
      fatalError("TestScheduler.advance(by:) needs a duration of zero or more, not \(duration)")
    }
    runTasks(until: .relative(duration.clampedNanoseconds))
  }

  /// `advance(to:)` with a `Duration`: moves the clock forward to `time` (virtual time since the
  /// scheduler was created, as `elapsed` reads it), running every task that falls due on the way
  /// at its due time, then the tasks due at `time`.
  ///
  /// Disfavoured against the `DispatchTimeInterval` form, so that `advance(to: .seconds(1))`
  /// keeps meaning what it meant.
  /// - Precondition: `time` is not earlier than `elapsed`.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public func advance(to time: Duration) {
    guard time >= .zero else {
      fatalError("TestScheduler.advance(to:) needs a time of zero or more, not \(time)")
    }
    runTasks(until: .absolute(time.clampedNanoseconds))
  }

  private enum Target {
    case relative(UInt64)
    case absolute(UInt64)
  }

  /// Runs the due tasks one at a time (each taken out under the lock and run without it, so it
  /// may schedule more), moving the clock to each task's due time, and finally to the target.
  private func runTasks(until target: Target?) {
    let end = state.withCriticalSection { state -> UInt64 in
      if state.isRunning {
        fatalError("TestScheduler: run() and advance must not be called from the scheduler's tasks")
      }
      state.isRunning = true
      switch target {
      case nil: return state.now
      case .relative(let interval)?: return state.now.adding(nanoseconds: interval)
      case .absolute(let time)?:
        if time < state.now {
          fatalError("TestScheduler.advance(to:): \(time) ns is earlier than now (\(state.now) ns)")
        }
        return time
      }
    }
    defer { state.withCriticalSection { $0.isRunning = false } }
    while let task = state.withCriticalSection({ state -> VirtualTask? in
      guard let (task, deadline) = state.heap.popFirst(dueBy: end) else {
        state.now = end
        return nil
      }
      state.now = max(state.now, deadline)
      return task
    }) {
      task.takeTask()?()
    }
  }

  private func enqueue(_ task: @escaping () -> Void, after nanoseconds: UInt64) -> VirtualTask {
    let entry = VirtualTask(task: task, scheduler: self)
    state.withCriticalSection { state in
      state.heap.insert(entry, deadline: state.now.adding(nanoseconds: nanoseconds))
    }
    return entry
  }

  /// Takes a cancelled timer's task out of the heap, releasing it.
  fileprivate func cancel(_ entry: VirtualTask) {
    let removed = state.withCriticalSection { $0.heap.remove(entry) }
    if removed { _ = entry.takeTask() }
  }
}

extension TestScheduler: SchedulerClock {
  /// `now` in nanoseconds: the clock the scheduler's timers count on, for waits that measure
  /// what is left of a timeout.
  package var clockNanoseconds: UInt64 { state.withCriticalSection { $0.now } }
}

/// A task of a `TestScheduler` in its heap. Whoever takes it out of the heap owns the task: the
/// run loop of `runTasks` or a successful `cancel()`.
private final class VirtualTask: DeadlineHeapEntry, CoroutineTimer, @unchecked Sendable {
  // Unchecked exclusivity: only touched by the scheduler's heap, under its lock.
  @exclusivity(unchecked) var heapIndex: Int?
  private weak var scheduler: TestScheduler?
  private var task: (() -> Void)?

  init(task: (() -> Void)?, scheduler: TestScheduler?) {
    self.task = task
    self.scheduler = scheduler
  }

  func takeTask() -> (() -> Void)? { task.take() }

  func cancel() { scheduler?.cancel(self) }
}

extension DispatchTimeInterval {
  /// Whether the interval is below zero.
  fileprivate var isNegative: Bool {
    switch self {
    case .seconds(let n), .milliseconds(let n), .microseconds(let n), .nanoseconds(let n):
      return n < 0
    case .never: return false
    @unknown default: return false
    }
  }
}
