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

/// The working part of a `BlockingPool`: its lock-protected state, its threads' loop and the
/// wake-up semaphore idle threads wait on. Threads hold it (not the public pool), so that the
/// pool's `deinit` can tell them to leave.
final class BlockingPoolCore: Sendable {
  let threadLimit: Int
  /// What the pool's threads are called (at most 15 bytes: Linux keeps no more).
  let threadName: String
  let state = InlineMutex(BlockingPoolState())
  /// Signalled once for each sleeping idle thread a submission claims
  /// (`BlockingPoolState.idle`).
  private let wakeUp = DispatchSemaphore(value: 0)
  /// Added to once for each spinning idle thread a submission claims
  /// (`BlockingPoolState.spinning`).
  private let handOffs = InlineAtomic<Int>(0)

  /// How long a thread waits idle for work before it ends (and is made again when needed).
  let keepAlive: DispatchTimeInterval

  /// How many times an idle thread looks for work, yielding the processor in between, before
  /// it sleeps (a few microseconds in all when nothing else is runnable).
  static let pollsBeforeSleeping = 16

  init(threadLimit: Int, threadName: String, keepAlive: DispatchTimeInterval) {
    self.threadLimit = threadLimit
    self.keepAlive = keepAlive
    self.threadName = threadName
  }

  /// The mark the pool's threads carry (`cov_thread_tag`): the core's address.
  var threadTag: UInt { UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

  // MARK: Callers

  /// Runs `job` on a pool thread while the current coroutine is suspended (its detail for
  /// snapshots: `detail`). Cancelled while queued, the job leaves the queue and this throws;
  /// cancelled once its closure runs, this waits for the closure (it cannot be interrupted) and
  /// returns normally, the outcome stored in the job.
  func await(_ job: BlockingJob, detail: UInt) throws(CoroutineError) {
    do {
      try SystemWaiter.wait(detail: detail, register: { submit(job, waiter: $0) }, withdraw: {})
    } catch {
      switch state.withCriticalSection({ $0.withdraw(job) }) {
      case .withdrawn: throw error
      case .finished: return
      case .new, .queued, .running: awaitRunningClosure(of: job, detail: detail)
      }
    }
  }

  /// Blocks the calling thread (not a coroutine) until `job` has run on a pool thread.
  func awaitBlocking(_ job: BlockingJob) {
    try? SystemWaiter.wait(register: { submit(job, waiter: $0) }, withdraw: {})
  }

  /// The rest of a cancelled coroutine's wait for a closure that already runs: the coroutine's
  /// frames (with the caller's closure context and the job) must outlive the closure.
  private func awaitRunningClosure(of job: BlockingJob, detail: UInt) {
    let coroutine = CoroutineContext.current.unsafelyUnwrapped  // the caller is one
    while true {
      coroutine.suspendUninterruptibly(.callback, detail: detail) { waker in
        let finished = state.withCriticalSection { _ -> Bool in
          if job.phase == .finished { return true }
          job.waiter = .coroutine(waker)
          return false
        }
        if finished { waker.resume() }
      }
      if state.withCriticalSection({ _ in job.phase == .finished }) { return }
    }
  }

  /// Queues `job` for a thread, with `waiter` to resume when it is done; wakes or starts a
  /// thread for it when the pool has room.
  private func submit(_ job: BlockingJob, waiter: SystemWaiter) {
    let start = state.withCriticalSection { state in
      job.waiter = waiter
      return state.submit(job, threadLimit: threadLimit)
    }
    switch start {
    case .none: break
    case .handToSpinningThread: handOffs.wrappingAdd(1, ordering: .releasing)
    case .wakeIdleThread: wakeUp.signal()
    case .startThread: startThread()
    }
  }

  /// Starts one thread (already counted). If the system refuses and no thread is left, the
  /// queued jobs fail with the error rather than wait forever.
  private func startThread() {
    let context = UnsafeRetainedBits(retaining: self)
    let error = cov_thread_start(
      { context in
        UnsafeRetainedBits<BlockingPoolCore>(unsafeContext: context).take().threadLoop()
      }, context.unsafeContext, threadName, 0)
    guard error != 0 else { return }
    context.release()
    let failure = CoSystemError(operation: "pthread_create", path: threadName, code: error)
    for waiter in state.withCriticalSection({ $0.threadDidNotStart(failure) }) { waiter.resume() }
  }

  /// Tells idle threads to leave (the pool was deinitialized: nobody can submit any more).
  func shutDown() {
    let idle = state.withCriticalSection { state -> Int in
      state.isShutDown = true
      defer { state.idle = 0 }
      return state.idle
    }
    for _ in 0..<idle { wakeUp.signal() }
  }

  // MARK: Threads

  /// A pool thread: runs queued jobs in order; reports each finished one in the same critical
  /// section that takes the next; waits idle for `keepAlive`, then ends.
  private func threadLoop() {
    cov_thread_set_tag(threadTag)
    var finished: BlockingJob?
    while true {
      let (next, waiter, leave) = state.withCriticalSection {
        state -> (BlockingJob?, SystemWaiter?, Bool) in
        let waiter = finished.flatMap { state.finish($0) }
        if let next = state.takeNext() { return (next, waiter, false) }
        if state.isShutDown {
          state.threads -= 1
          return (nil, waiter, true)
        }
        state.idle += 1
        state.spinning += 1
        return (nil, waiter, false)
      }
      finished = nil
      waiter?.resume()
      if let next {
        next.run()
        finished = next
      } else if leave || !waitIdle() {
        return
      }
    }
  }

  /// Waits, idle, for a submission to claim this thread; false when the thread should end
  /// instead (idle for `keepAlive`).
  ///
  /// A caller that awaits the pool in a loop submits again right after its coroutine resumes,
  /// so the thread first *spins*: it polls an atomic count of hand-offs for a while, yielding
  /// the processor between polls (to the thread that will submit, on a small machine), and a
  /// submission that finds a spinning thread hands it the job with one atomic add, with no
  /// futex sleep and wake-up on either side. Then it sleeps on the semaphore.
  private func waitIdle() -> Bool {
    for _ in 0..<Self.pollsBeforeSleeping {
      if takeHandOff() { return true }
      sched_yield()
    }
    let claimed = state.withCriticalSection { state -> Bool in
      // Every spinning thread was claimed (this one, or one as good that took this one's
      // hand-off already): a hand-off is on its way for this one.
      guard state.spinning > 0 else { return true }
      state.spinning -= 1
      return false
    }
    if claimed {
      while !takeHandOff() { sched_yield() }
      return true
    }
    if wakeUp.wait(timeout: .now() + keepAlive) == .success { return true }
    let leave = state.withCriticalSection { state -> Bool in
      // An unclaimed sleeping thread (this one, or one as good) leaves; if every sleeping
      // thread has been claimed, a signal is on its way for this one.
      guard state.idle > state.spinning else { return false }
      state.idle -= 1
      state.threads -= 1
      return true
    }
    if !leave { wakeUp.wait() }
    return !leave
  }

  /// Takes one hand-off meant for a spinning thread, if there is one.
  private func takeHandOff() -> Bool {
    var count = handOffs.load(ordering: .acquiring)
    while count > 0 {
      let (exchanged, original) = handOffs.compareExchange(
        expected: count, desired: count - 1, ordering: .acquiringAndReleasing)
      if exchanged { return true }
      count = original
    }
    return false
  }
}
