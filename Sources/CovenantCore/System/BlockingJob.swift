/// Where a `BlockingPool.await` call is.
@usableFromInline
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
/// to run it; `TypedBlockingJob` adds the closure and its outcome. The pool's queue holds jobs
/// whatever their closure returns, through this class (a subclass rather than a protocol: the
/// pool reads and writes the two fields directly, not through witnesses).
///
/// `phase` and `waiter` belong to the pool's lock: the caller publishes its waiter and the
/// queue entry under it, a pool thread marks the job running and, after the closure, finished
/// and reads the waiter to resume under it, and a cancelled caller withdraws or re-registers
/// under it. So whichever of "finished" and "a new waiter" comes second sees the other, and no
/// wake-up is lost. (The lock, not Swift's dynamic exclusivity checks, keeps accesses apart.)
///
/// `@unchecked Sendable`: the fields are only touched under the pool's lock.
@usableFromInline
class BlockingJob: @unchecked Sendable {
  @exclusivity(unchecked) final var phase = BlockingJobPhase.new
  @exclusivity(unchecked) final var waiter: SystemWaiter?
  /// Runs the closure and stores its outcome: given by the client-specialized
  /// `BlockingPool.await`, so that this runs specialized code (a generic method of the job,
  /// called through the class, would look up the metadata of `T?` on every call).
  @usableFromInline let execute: @Sendable (BlockingJob) -> Void

  @usableFromInline init(execute: @escaping @Sendable (BlockingJob) -> Void) {
    self.execute = execute
  }

  /// Runs the closure on the calling (pool) thread and stores what it returned or threw.
  final func run() { execute(self) }

  /// Stores `error` as the outcome without running the closure (the pool could not start a
  /// thread for it).
  func fail(_ error: any Error) {}

  /// Releases the closure (and what it captured) of a job that will never run.
  func discard() {}
}

/// The `BlockingJob` of a closure returning `T`: the closure, then its outcome. Made by the
/// client-specialized `BlockingPool.await`, so that its type metadata is a cached constant
/// there and its closure and outcome are handled by specialized code.
///
/// `@unchecked Sendable`: the closure is run (and released) by one pool thread; the outcome is
/// written by that thread before it takes the pool's lock to finish the job, and read by the
/// caller after its waiter was resumed from that critical section (or, outside coroutines, its
/// semaphore signalled).
@usableFromInline
final class TypedBlockingJob<T>: BlockingJob, @unchecked Sendable {
  @usableFromInline @exclusivity(unchecked) var body: (() throws -> T)?
  @usableFromInline @exclusivity(unchecked) var value: T?
  @usableFromInline @exclusivity(unchecked) var error: (any Error)?

  @inlinable init(_ body: @escaping () throws -> T) {
    self.body = body
    super.init { job in unsafeDowncast(job, to: TypedBlockingJob<T>.self).runBody() }
  }

  /// Runs the closure, releasing it (and what it captured) on the pool thread after the call.
  @inlinable func runBody() {
    let body = self.body.unsafelyUnwrapped
    self.body = nil
    do {
      value = try body()
    } catch {
      self.error = error
    }
  }

  override func fail(_ error: any Error) {
    body = nil
    self.error = error
  }

  override func discard() { body = nil }

  /// The closure's value, or rethrows its error. Called once, by the caller, after the job
  /// finished.
  @inlinable func takeOutcome() throws -> T {
    if let error { throw error }
    return value.unsafelyUnwrapped
  }
}
