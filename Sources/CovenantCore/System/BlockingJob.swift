/// Where a `BlockingPool.await` call is.
enum BlockingJobPhase {
  /// Made, not yet handed to the pool.
  case new
  /// In the pool's queue, waiting for a thread.
  case queued
  /// Its caller gave up before a thread took it: a tombstone in the queue.
  case withdrawn
  /// A pool thread runs the closure.
  case running
  /// The closure returned or threw (or could not be run); the outcome is stored.
  case finished
}

/// One call of `BlockingPool.await` as the pool sees it: its phase, who waits for it, and how
/// to run it. The pool's queue holds them whatever their closure returns.
///
/// `phase` and `waiter` belong to the pool's lock: the caller publishes its waiter and the
/// queue entry under it, a pool thread marks the job running and, after the closure, finished
/// and reads the waiter to resume under it, and a cancelled caller withdraws or re-registers
/// under it. So whichever of "finished" and "a new waiter" comes second sees the other, and no
/// wake-up is lost.
protocol BlockingJob: AnyObject, Sendable {
  var phase: BlockingJobPhase { get set }
  var waiter: SystemWaiter? { get set }

  /// Runs the closure on the calling (pool) thread and stores what it returned or threw.
  func run()

  /// Stores `error` as the outcome without running the closure (the pool could not start a
  /// thread for it).
  func fail(_ error: any Error)

  /// Releases the closure (and what it captured) of a job that will never run.
  func discard()
}

/// The `BlockingJob` of a closure returning `T`: the closure, then its outcome.
///
/// `@unchecked Sendable`: `phase` and `waiter` are only touched under the pool's lock. The
/// closure is run (and released) by one pool thread; the outcome is written by that thread
/// before it takes the lock to finish the job, and read by the caller after its waiter was
/// resumed from that critical section (or, outside coroutines, its semaphore signalled).
final class TypedBlockingJob<T>: BlockingJob, @unchecked Sendable {
  var phase = BlockingJobPhase.new
  var waiter: SystemWaiter?
  private var body: (() throws -> T)?
  private var outcome: Result<T, any Error>?

  init(_ body: @escaping () throws -> T) { self.body = body }

  func run() {
    let body = self.body.unsafelyUnwrapped
    self.body = nil  // what it captured is released on the pool thread, after the call
    outcome = Result { try body() }
  }

  func fail(_ error: any Error) {
    body = nil
    outcome = .failure(error)
  }

  func discard() { body = nil }

  /// The closure's value, or rethrows its error. Called once, by the caller, after the job
  /// finished.
  func takeOutcome() throws -> T {
    try outcome.unsafelyUnwrapped.get()
  }
}
