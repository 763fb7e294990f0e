import NIOCore
import Synchronization

/// The one scheduler of each event loop, created on first use and forgotten when the loop
/// shuts down (so the registry does not keep loops alive after that).
enum SchedulerRegistry {
  private static let schedulers = Mutex<[ObjectIdentifier: EventLoopCoroutineScheduler]>([:])

  /// How far ahead the shutdown sentinel is scheduled: far enough never to fire while the loop
  /// runs, small enough to stay clear of `NIODeadline` overflow in timer arithmetic.
  private static let sentinelDelay = TimeAmount.hours(24 * 365 * 100)

  /// The scheduler of `loop`, creating it (and its shutdown sentinel) on first use.
  static func scheduler(for loop: any EventLoop) -> EventLoopCoroutineScheduler {
    let key = ObjectIdentifier(loop)
    let (scheduler, isNew) = schedulers.withLock { table -> (EventLoopCoroutineScheduler, Bool) in
      if let existing = table[key] { return (existing, false) }
      let created = EventLoopCoroutineScheduler(eventLoop: loop)
      table[key] = created
      return (created, true)
    }
    if isNew { watchShutdown(of: loop, scheduler) }
    return scheduler
  }

  /// The scheduler of `loop` if one exists (no creation: used on hot paths of the bridges).
  static func existingScheduler(for loop: any EventLoop) -> EventLoopCoroutineScheduler? {
    let key = ObjectIdentifier(loop)
    return schedulers.withLock { $0[key] }
  }

  /// A loop fails all its scheduled tasks with `EventLoopError.shutdown` when it shuts down
  /// (an `EmbeddedEventLoop` runs them instead): a task scheduled a century ahead is therefore
  /// a shutdown notification, which NIO's public API does not otherwise offer.
  private static func watchShutdown(of loop: any EventLoop, _ scheduler: EventLoopCoroutineScheduler) {
    let key = ObjectIdentifier(loop)
    let sentinel = loop.scheduleTask(in: sentinelDelay) {}
    sentinel.futureResult.whenComplete { _ in
      _ = schedulers.withLock { $0.removeValue(forKey: key) }
      scheduler.loopDidShutDown()
    }
  }
}

extension EventLoop {
  /// This loop's coroutine scheduler: one instance per loop, so coroutines woken by other
  /// coroutines of the same loop continue without a new `execute`.
  public var coroutineScheduler: EventLoopCoroutineScheduler {
    SchedulerRegistry.scheduler(for: self)
  }
}
