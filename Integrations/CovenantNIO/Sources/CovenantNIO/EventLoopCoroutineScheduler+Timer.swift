import CovenantCore
import Dispatch
import NIOCore

extension EventLoopCoroutineScheduler {
  /// Runs `task` on the loop `delay` from now, as a turn of this scheduler, unless the returned
  /// timer is cancelled first: the timer of every delay and timeout of the loop's coroutines
  /// (`Coroutine.delay`, `await(timeout:)`, `select` timeouts, `CoSemaphore.wait(timeout:)`).
  ///
  /// The timer is the loop's own `scheduleTask(in:)`, so a timeout on the loop costs no thread
  /// hop, and the coroutine it wakes continues in the same loop task. Cancelling it cancels the
  /// loop's scheduled task (`Scheduled.cancel()`), which releases `task` at once. A negative
  /// delay counts as zero; `.never` never runs `task`. After the loop has shut down, the timer
  /// runs `task` on the private queue that takes over the loop's work.
  ///
  /// A timer still pending when the loop shuts down runs `task` then, early: NIO fails a
  /// closing loop's scheduled tasks (`EventLoopError.shutdown`) instead of running them, and a
  /// coroutine the shutdown does not cancel (one started through Covenant's generic
  /// `CoroutineScheduler` API is not tracked here) would otherwise stay suspended forever in its
  /// delay or timed wait. NIO fails them on the loop's thread during its final drain, so `task`
  /// runs there, in a turn, like the work `loopDidShutDown()` finishes: from another thread its
  /// wake-up would be an `execute` the closed loop refuses (with an error message).
  @discardableResult
  public func scheduleTask(
    after delay: DispatchTimeInterval, _ task: @escaping () -> Void
  ) -> any CoroutineTimer {
    guard let amount = delay.timeAmount else { return LoopTimer(scheduled: nil) }
    if isShutDown { return Self.afterShutdown.scheduleTask(after: delay, task) }
    nonisolated(unsafe) let task = task
    let scheduled = eventLoop.scheduleTask(in: amount) { [self] in runTurn { task() } }
    // On the loop (where coroutines arm their timers) this is one more callback on the task's
    // promise; from another thread NIO adds it with an `execute`.
    scheduled.futureResult.whenFailure { [self] error in
      // `cancel()` fails the task with `.cancelled`: only the shutdown's failure runs it.
      guard (error as? EventLoopError) == .shutdown else { return }
      if eventLoop.inEventLoop { runTurn { task() } } else { Self.runAfterShutdown(task) }
    }
    return LoopTimer(scheduled: scheduled)
  }
}

/// A loop timer: the loop's scheduled task, cancelled through its `Scheduled` handle.
private struct LoopTimer: CoroutineTimer {
  let scheduled: Scheduled<Void>?
  func cancel() { scheduled?.cancel() }
}

extension DispatchTimeInterval {
  /// The interval as a NIO `TimeAmount`, negative intervals as zero and huge ones capped at a
  /// century (clear of `NIODeadline` overflow); `nil` for `.never`.
  fileprivate var timeAmount: TimeAmount? {
    func amount(_ count: Int, _ scale: Int64) -> TimeAmount {
      let century = TimeAmount.hours(24 * 365 * 100).nanoseconds
      let (product, overflow) = Int64(max(0, count)).multipliedReportingOverflow(by: scale)
      return .nanoseconds(overflow ? century : min(product, century))
    }
    switch self {
    case .seconds(let n): return amount(n, 1_000_000_000)
    case .milliseconds(let n): return amount(n, 1_000_000)
    case .microseconds(let n): return amount(n, 1_000)
    case .nanoseconds(let n): return amount(n, 1)
    case .never: return nil
    @unknown default: return nil
    }
  }
}
