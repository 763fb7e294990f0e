import NIOConcurrencyHelpers
import NIOCore

/// The one scheduler of each event loop, created on first use and forgotten when the loop
/// shuts down (so the registry does not keep loops alive after that).
enum SchedulerRegistry {
  private struct Table {
    var live: [ObjectIdentifier: EventLoopCoroutineScheduler] = [:]
    /// Loops that have shut down, held weakly: a lookup for one of them must not create a
    /// scheduler that would send work to the dead loop. Swept when a loop is deallocated.
    var dead: [ObjectIdentifier: DeadLoop] = [:]
  }

  private final class DeadLoop: @unchecked Sendable {
    weak var loop: (any EventLoop)?
    init(_ loop: any EventLoop) { self.loop = loop }
  }

  /// `NIOLockedValueBox` (a pthread mutex, visible to ThreadSanitizer).
  private static let schedulers = NIOLockedValueBox(Table())

  /// How far ahead the shutdown sentinel is scheduled: far enough never to fire while the loop
  /// runs, small enough to stay clear of `NIODeadline` overflow in timer arithmetic.
  private static let sentinelDelay = TimeAmount.hours(24 * 365 * 100)

  /// The scheduler of `loop`, creating it (and its shutdown sentinel) on first use.
  static func scheduler(for loop: any EventLoop) -> EventLoopCoroutineScheduler {
    let key = ObjectIdentifier(loop)
    enum Found {
      case live(EventLoopCoroutineScheduler)
      case created(EventLoopCoroutineScheduler)
      case dead
    }
    let found = schedulers.withLockedValue { table -> Found in
      if let existing = table.live[key] { return .live(existing) }
      if let dead = table.dead[key], dead.loop === loop { return .dead }
      let created = EventLoopCoroutineScheduler(eventLoop: loop)
      table.live[key] = created
      return .created(created)
    }
    switch found {
    case .live(let scheduler):
      return scheduler
    case .created(let scheduler):
      watchShutdown(of: loop, scheduler)
      return scheduler
    case .dead:
      // A scheduler that knows from birth that its loop is gone: its work runs on the
      // fallback queue, its coroutines are cancelled and fail with `EventLoopError.shutdown`.
      let scheduler = EventLoopCoroutineScheduler(eventLoop: loop)
      scheduler.loopDidShutDown()
      return scheduler
    }
  }

  /// The scheduler of `loop` if one exists (no creation: used on hot paths of the bridges).
  static func existingScheduler(for loop: any EventLoop) -> EventLoopCoroutineScheduler? {
    let key = ObjectIdentifier(loop)
    return schedulers.withLockedValue { $0.live[key] }
  }

  /// A loop fails all its scheduled tasks with `EventLoopError.shutdown` when it shuts down
  /// (an `EmbeddedEventLoop` runs them instead): a task scheduled a century ahead is therefore
  /// a shutdown notification, which NIO's public API does not otherwise offer.
  private static func watchShutdown(
    of loop: any EventLoop, _ scheduler: EventLoopCoroutineScheduler
  ) {
    let key = ObjectIdentifier(loop)
    let sentinel = loop.scheduleTask(in: sentinelDelay) {}
    sentinel.futureResult.whenComplete { _ in
      schedulers.withLockedValue { table in
        table.live.removeValue(forKey: key)
        table.dead = table.dead.filter { $0.value.loop != nil }
        table.dead[key] = DeadLoop(loop)
      }
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
