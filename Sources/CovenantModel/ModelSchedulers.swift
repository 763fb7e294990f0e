import Covenant
import Dispatch
import Foundation

/// A scheduler that misbehaves within the contract: it runs every task exactly once, but late
/// (after a random short delay), out of order (a random pending task, not the oldest) and on
/// random threads (the global concurrent queues).
public final class ShufflingScheduler: CoroutineScheduler, @unchecked Sendable {
  private let lock = NSLock()
  private var pending: [() -> Void] = []
  private var generator: SplitMix64
  private var executed = 0
  private var scheduled = 0

  /// A scheduler whose delays and choices derive from `seed`.
  public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

  /// Tasks run so far (each scheduled task runs once).
  public var executedCount: Int { lock.withLock { executed } }

  /// Tasks scheduled so far.
  public var scheduledCount: Int { lock.withLock { scheduled } }

  /// Queues `task`; one task (a random pending one) runs per call, later, on some thread.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let (delay, qos) = lock.withLock { () -> (Int, DispatchQoS.QoSClass) in
      pending.append(task)
      scheduled += 1
      return (
        generator.int(0...3) == 0 ? generator.int(0...500) : 0,
        generator.pick([.utility, .default, .userInitiated])
      )
    }
    DispatchQueue.global(qos: qos).asyncAfter(deadline: .now() + .microseconds(delay)) {
      [self] in
      let chosen = lock.withLock { () -> () -> Void in
        executed += 1
        return pending.remove(at: generator.int(0...(pending.count - 1)))
      }
      chosen()
    }
  }
}

/// The queues and schedulers random programs pick from.
public enum ModelSchedulers {
  /// Queues for promise observers and work.
  public static let queues: [DispatchQueue] = [
    DispatchQueue(label: "covenant.model.serial"),
    DispatchQueue(label: "covenant.model.concurrent", attributes: .concurrent),
    DispatchQueue.global(),
  ]

  /// Schedulers for coroutines: serial, concurrent, `OperationQueue`, and a user-defined one
  /// that runs tasks late, out of order and on random threads. (Immutable; every element is
  /// thread-safe, though `CoroutineScheduler` does not require `Sendable`.)
  nonisolated(unsafe) public static let schedulers: [any CoroutineScheduler] = [
    DispatchQueue(label: "covenant.model.coroutines.serial"),
    DispatchQueue(label: "covenant.model.coroutines.concurrent", attributes: .concurrent),
    { () -> OperationQueue in
      let queue = OperationQueue()
      queue.maxConcurrentOperationCount = 2
      return queue
    }(),
    ShufflingScheduler(seed: 0x5EED),
  ]
}
