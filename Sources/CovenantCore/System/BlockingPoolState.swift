/// What a `BlockingPool` keeps under its lock: the FIFO queue of jobs waiting for a thread,
/// and how many threads exist, wait for work, and run closures.
///
/// Threads are made lazily, one per job that finds no idle thread, up to the pool's limit; a
/// job beyond that waits in the queue (its caller suspended, or blocked outside coroutines).
/// A caller that gives up before a thread took its job marks it withdrawn: a tombstone that
/// `takeNext()` skips and the shared tombstone mechanism drops (`RingBuffer+Tombstones.swift`),
/// so leaving costs O(1) amortized however long the queue is.
///
/// `@unchecked Sendable`: only ever touched inside the pool's mutex.
struct BlockingPoolState: @unchecked Sendable {
  /// Jobs waiting for a thread, first come first served; withdrawn ones are tombstones.
  private(set) var queue = RingBuffer<BlockingJob>()
  /// How many entries of `queue` are tombstones.
  private var tombstones = 0
  /// Threads alive (running a job, looking for one, or idle).
  var threads = 0
  /// Idle threads no submission has claimed yet, spinning or sleeping.
  var idle = 0
  /// Of the idle threads, those still spinning (polling for a hand-off before they sleep): a
  /// claim of one is a hand-off (an atomic add), of a sleeping one a signal of the semaphore.
  var spinning = 0
  /// Jobs whose closure runs now.
  var running = 0
  /// Jobs whose closure has returned or thrown, since the pool was made.
  var completed = 0
  /// Set when the pool is deinitialized: idle threads leave instead of waiting.
  var isShutDown = false

  /// Jobs waiting for a thread (tombstones left out).
  var queued: Int { queue.count - tombstones }

  /// What a submission asks of the caller, once the lock is released.
  enum Start {
    /// A thread will take the job: nothing to do.
    case none
    /// Add a hand-off: a spinning idle thread was claimed.
    case handToSpinningThread
    /// Signal the wake-up semaphore once: a sleeping idle thread was claimed.
    case wakeIdleThread
    /// Start a new thread (counted already).
    case startThread
  }

  /// Queues `job` and says how a thread will come to take it.
  mutating func submit(_ job: BlockingJob, threadLimit: Int) -> Start {
    job.phase = .queued
    queue.append(job)
    if spinning > 0 {
      spinning -= 1
      idle -= 1
      return .handToSpinningThread
    }
    if idle > 0 {
      idle -= 1
      return .wakeIdleThread
    }
    guard threads < threadLimit else { return .none }
    threads += 1
    return .startThread
  }

  /// The first job still waiting, now running; `nil` if none waits.
  mutating func takeNext() -> BlockingJob? {
    while let job = queue.popFirst() {
      if job.phase == .withdrawn {
        tombstones -= 1
        continue
      }
      job.phase = .running
      running += 1
      return job
    }
    return nil
  }

  /// Records that `job`'s closure is done; returns who waits for it.
  mutating func finish(_ job: BlockingJob) -> SystemWaiter? {
    job.phase = .finished
    running -= 1
    completed += 1
    return job.waiter
  }

  /// Takes a job whose caller gave up out of the queue, if no thread has taken it yet; returns
  /// its phase (`.withdrawn` if it was withdrawn now or never queued).
  mutating func withdraw(_ job: BlockingJob) -> BlockingJobPhase {
    switch job.phase {
    case .new:
      job.phase = .withdrawn
      return .withdrawn
    case .queued:
      job.phase = .withdrawn
      job.discard()
      tombstones += 1
      let isTombstone = { (entry: BlockingJob) in entry.phase == .withdrawn }
      queue.dropLeadingTombstones(&tombstones, isTombstone)
      queue.dropTrailingTombstones(&tombstones, isTombstone)
      if queue.compact(ifMoreThanHalfGone: tombstones, isTombstone) { tombstones = 0 }
      return .withdrawn
    case .withdrawn, .running, .finished:
      return job.phase
    }
  }

  /// A thread could not be started: uncounts it. If no thread is left to run the queue, fails
  /// every waiting job with `error` (nothing would ever run them) and returns their waiters.
  mutating func threadDidNotStart(_ error: any Error) -> [SystemWaiter] {
    threads -= 1
    guard threads == 0 else { return [] }
    var waiters: [SystemWaiter] = []
    while let job = queue.popFirst() {
      if job.phase == .withdrawn {
        tombstones -= 1
        continue
      }
      job.fail(error)
      job.phase = .finished
      if let waiter = job.waiter { waiters.append(waiter) }
    }
    return waiters
  }
}
