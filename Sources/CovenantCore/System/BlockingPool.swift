import CCoroutineContext
import CCovenantShims
import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A bounded pool of threads for blocking work (file system calls, a C library that blocks,
/// a long computation), awaited from coroutines: `await { … }` suspends the calling coroutine
/// while its closure runs on a pool thread, so the coroutine's scheduler keeps running.
///
/// ```swift
/// DispatchQueue.main.startCoroutine {
///   let digest = try BlockingPool.shared.await { sha256(ofFileAt: path) }  // main thread free
///   label.text = digest
/// }
/// ```
///
/// - **Bounded.** The pool never runs more than `threadLimit` threads. They are started when
///   work arrives and none is idle, and end after 10 seconds without work: a program that never
///   uses the pool has none. Callers beyond the bound wait **as suspended coroutines**, in a
///   FIFO queue (first to call, first to run), not as blocked threads: 10,000 coroutines reading
///   files through `BlockingPool.shared` cost 10,000 suspended coroutines and at most
///   `threadLimit` threads (Go's runtime, for comparison, dies at 10,000 threads blocked in
///   file calls).
/// - **Cancellation.** A coroutine cancelled while its closure waits in the queue leaves the
///   queue at once (O(1) amortized: a tombstone, as `CoSemaphore`'s waiters) and throws
///   `CoroutineError.canceled`; the closure never runs. Once a thread runs the closure, nothing
///   can interrupt it (stopping a thread midway would leave locks held and memory inconsistent):
///   the coroutine then waits for it, and `await` returns its value (or throws its error) as if
///   the cancellation had come just after. The coroutine's next await throws. A closure that
///   may run long should check a flag of its own.
/// - **Outside a coroutine** `await` blocks the calling thread until the closure has run on a
///   pool thread, waiting its turn like everyone else. Called on one of the pool's own threads
///   (a closure that uses the same pool), the closure simply runs there: waiting for another of
///   the pool's threads could wait forever once every thread does the same.
/// - **Lifetime.** A pool that is deinitialized (no call can be in progress then: a caller
///   holds the pool) lets its idle threads end at once. At process exit threads are not joined:
///   a closure still running stops where it is, as any thread's work does.
/// - **Metrics.** `counters` says how many closures run, wait and have completed.
///
/// The pool's threads have the system's default stack size and the signal mask of the thread
/// that started them; they run no coroutines of their own.
public final class BlockingPool: Sendable {
  /// The pool of the system layer (`CoFile`) and of whoever needs one: `max(8, processors)`
  /// threads, or the value of the environment variable `COVENANT_BLOCKING_POOL_THREADS` (a
  /// positive integer) read when the pool is first used.
  ///
  /// Kotlin's `Dispatchers.IO` allows 64 threads and Tokio's `spawn_blocking` 512; this pool is
  /// smaller because its callers wait cheaply (suspended coroutines, not threads), so more
  /// threads would only add parallel blocking calls, which local disks rarely reward.
  public static let shared: BlockingPool = {
    let configured = getenv("COVENANT_BLOCKING_POOL_THREADS").flatMap { Int(String(cString: $0)) }
    if let configured, configured > 0 { return BlockingPool(threads: configured) }
    return BlockingPool(threads: max(8, Int(cov_processor_count())))
  }()

  /// The most threads the pool runs at once.
  public let threadLimit: Int

  let core: BlockingPoolCore

  /// A pool of at most `threads` threads (started when work arrives).
  ///
  /// - Precondition: `threads >= 1`.
  public convenience init(threads: Int) {
    self.init(threads: threads, keepAlive: .seconds(10))
  }

  /// A pool whose idle threads end after `keepAlive` (tests use a short one).
  package init(threads: Int, keepAlive: DispatchTimeInterval) {
    // fatalError, not precondition: an optimized build drops a precondition's message.
    if threads < 1 { fatalError("BlockingPool(threads:) needs at least 1 thread, not \(threads)") }
    threadLimit = threads
    core = BlockingPoolCore(
      threadLimit: threads, threadName: Self.nextThreadName(), keepAlive: keepAlive)
  }

  deinit { core.shutDown() }

  /// Runs `body` on one of the pool's threads and returns what it returns (or throws what it
  /// throws), suspending the calling coroutine meanwhile; outside a coroutine, blocks the
  /// calling thread. Callers beyond the pool's bound wait in FIFO order.
  ///
  /// ```swift
  /// let entries = try BlockingPool.shared.await { try listDirectory(path) }
  /// ```
  ///
  /// `body` escapes because it runs on another thread while the coroutine's frames may be
  /// copied off their shared stack (see "Stacks" in the Architecture article); what it captures
  /// is released on the pool thread once it has run.
  ///
  /// - Throws: what `body` throws; `CoroutineError.canceled` if the coroutine is cancelled
  ///   before `body` starts (then it never runs; see the type's notes for a cancel after),
  ///   or a `CoSystemError` (`pthread_create`) if the pool had no thread and could not start one.
  @inlinable @preconcurrency
  public func await<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    // Inlinable so that the job's generic type is specialized where it is used: its metadata is
    // then a cached constant, not a lookup on every call.
    let job = TypedBlockingJob(body)
    try run(job, detail: metadataBits(T.self))
    return try job.takeOutcome()
  }

  /// Runs `job` on a pool thread and returns once it has run: the calling coroutine suspended,
  /// or the calling thread blocked; on one of the pool's own threads, at once, right here.
  @usableFromInline
  func run(_ job: BlockingJob, detail: UInt) throws(CoroutineError) {
    if CoroutineContext.currentUnmanaged != nil {
      try core.await(job, detail: detail)
    } else if cov_thread_tag() == core.threadTag {
      job.run()
    } else {
      core.awaitBlocking(job)
    }
  }

  /// How many closures run, wait and have completed now, and how many threads the pool has.
  /// A snapshot, for metrics and tests.
  public var counters: Counters {
    core.state.withCriticalSection { state in
      Counters(
        running: state.running, queued: state.queued, completed: state.completed,
        threads: state.threads)
    }
  }

  /// Numbers of a `BlockingPool` at one moment.
  public struct Counters: Sendable, Hashable {
    /// Closures running on a pool thread now.
    public var running: Int
    /// Closures waiting for a thread (their callers suspended or blocked); a caller cancelled
    /// in the queue is not counted from the moment it is cancelled.
    public var queued: Int
    /// Closures that have returned or thrown since the pool was made.
    public var completed: Int
    /// Threads alive, busy or idle (at most `threadLimit`; idle ones end after 10 seconds).
    public var threads: Int

    /// Counters with these values.
    public init(running: Int, queued: Int, completed: Int, threads: Int) {
      self.running = running
      self.queued = queued
      self.completed = completed
      self.threads = threads
    }
  }

  /// The name the threads of the pool made now get (`cov-pool-N`, N counting pools: Linux keeps
  /// 15 bytes of a thread's name); tests find a pool's threads in `/proc/self/task` by it.
  private static func nextThreadName() -> String {
    "cov-pool-\(serials.wrappingAdd(1, ordering: .relaxed).oldValue)"
  }

  private static let serials = InlineAtomic<UInt64>(0)

  /// The name of the pool's threads, for tests.
  package var threadName: String { core.threadName }
}
