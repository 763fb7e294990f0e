import CCoroutineContext
import Dispatch
import Synchronization

/// One coroutine: its fiber (stack + saved registers), the scheduler it continues on, its
/// cancellation flag and its per-await `WaitState`.
///
/// Lifetime: the coroutine's own first frame holds a strong reference until the body returns
/// or throws, so a suspended coroutine stays alive (with its stack) until it is resumed and
/// finishes: frames are never skipped. Runners hold a reference while they run a slice.
@usableFromInline
final class CoroutineContext: Reaction, @unchecked Sendable {
  /// What the coroutine asked for when it last switched out; read by the runner on the same
  /// thread right after the switch, so it needs no synchronisation.
  enum Exit {
    case suspend
    case reschedule
    case finished
  }

  /// Written only by the coroutine itself (before it suspends or hops), read by whoever
  /// schedules it after a wake; the `WaitState` atomics order the two.
  /// The scheduler when it is not a `DispatchQueue` (then `nil`: see `dispatchTarget`).
  private var otherScheduler: (any CoroutineScheduler)?
  private(set) var currentSchedulerIdentity: ObjectIdentifier?
  /// The scheduler when it is a `DispatchQueue`, the common case: kept as the queue itself (no
  /// existential to box, copy and destroy per coroutine) with its `dispatch_queue_t`, so that
  /// dispatching a slice copies no reference.
  private var dispatchTarget: DirectDispatchTarget?

  /// The scheduler the coroutine runs on now.
  var scheduler: any CoroutineScheduler { dispatchTarget?.queue ?? otherScheduler! }

  /// Whether that scheduler is a `DispatchQueue` (whose timers are `TimerQueue`'s).
  var isOnDispatchQueue: Bool { dispatchTarget != nil }

  /// Created on the first slice, not in `init`: a coroutine that has not run yet holds no
  /// stack, so creating many coroutines ahead of their turn costs no memory, and a coroutine
  /// started after another finished reuses its warm stack from the pool.
  private var fiber: OpaquePointer?
  private let stackSize: Int
  /// Dropped when the coroutine finishes: it may refer to an object that keeps the coroutine
  /// (a `coroutineFuture`'s future).
  private var onStartFailure: ((any Error) -> Void)?
  private var body: (() throws -> Void)?
  var exit = Exit.suspend
  /// Where the coroutine was started, for the report of an error its body throws.
  let startFile: StaticString
  let startLine: UInt
  /// The scope it was started in (`startCoroutine(in:)`), whose handler gets an error its body
  /// throws; `nil` for most coroutines, which then carry no weak reference (a weak field costs
  /// runtime calls on every coroutine's creation and destruction).
  var scopeLink: WeakScopeLink?

  let wait = WaitState()
  private var generation: UInt64 = 0
  private let canceled = Atomic<Bool>(false)
  /// The coroutine's registration in the cell it awaits, reused from one await to the next;
  /// dropped when it might still be linked into a chain (see `awaitResolution`) and at the
  /// end (it refers back to the coroutine).
  private var awaitReaction: AwaitReaction?
  /// The coroutine's timer (see `CoroutineTimerEntry`), reused by every timed wait; created by
  /// the first one.
  var timerEntry: CoroutineTimerEntry?
  private let completion = Mutex<CompletionState>(CompletionState())
  /// `finished` is set when the coroutine finishes; `hasCallbacks` once a `whenFinished`
  /// callback was added. A coroutine nobody watches finishes without taking the lock: each
  /// side sets its flag, then reads the other's (sequentially consistent), so at least one of
  /// them sees both and collects the callbacks, under the lock, exactly once.
  private let finished = Atomic<Bool>(false)
  private let hasCallbacks = Atomic<Bool>(false)

  private struct CompletionState: @unchecked Sendable {
    var isComplete = false
    var callbacks: [() -> Void] = []
  }

  /// Creates a coroutine that has not started yet.
  ///
  /// - Parameter onStartFailure: called instead of the body when no stack can be allocated
  ///   for the first slice; by default the failure is reported on stderr.
  @usableFromInline init(
    scheduler: any CoroutineScheduler, stackSize: Int = 0,
    onStartFailure: ((any Error) -> Void)? = nil, file: StaticString, line: UInt,
    body: @escaping () throws -> Void
  ) {
    startFile = file
    startLine = line
    let (identity, queue) = classifyScheduler(scheduler)
    currentSchedulerIdentity = identity
    dispatchTarget = queue.map(DirectDispatchTarget.init)
    otherScheduler = queue == nil ? scheduler : nil
    self.stackSize = max(0, stackSize)
    self.onStartFailure = onStartFailure
    self.body = body
    super.init()
  }

  /// Creates a coroutine that has not started yet, on a dispatch queue (the common case, without
  /// an existential).
  @usableFromInline
  init(
    queue: DispatchQueue, stackSize: Int, file: StaticString, line: UInt,
    body: @escaping () throws -> Void
  ) {
    startFile = file
    startLine = line
    dispatchTarget = DirectDispatchTarget(queue)
    currentSchedulerIdentity = ObjectIdentifier(queue)
    self.stackSize = max(0, stackSize)
    onStartFailure = nil
    self.body = body
    super.init()
  }

  deinit {
    // Only reachable when finished or never started: a suspended coroutine's own frame keeps
    // it alive.
    if let fiber { cov_fiber_destroy(fiber) }
  }

  /// The coroutine whose body is running on this thread.
  static var current: CoroutineContext? { currentUnmanaged?.takeUnretainedValue() }

  /// `current`, unretained: code running inside the body may use it without reference
  /// counting, as the coroutine's own first frame keeps it alive.
  static var currentUnmanaged: Unmanaged<CoroutineContext>? {
    cov_tls_load(ThreadSlot.coroutine).map { Unmanaged.fromOpaque($0) }
  }

  /// The current coroutine, or `calledOutsideCoroutine`.
  @usableFromInline static func requireCurrent() throws(CoroutineError) -> CoroutineContext {
    guard let current else { throw .calledOutsideCoroutine }
    return current
  }


  // MARK: Starting and running (scheduler side)

  /// Schedules the first slice on the coroutine's scheduler.
  @usableFromInline func start() { schedule() }

  /// Hands the coroutine to its scheduler (through the running task's hand-off slot when that
  /// task serves the same scheduler).
  func schedule() {
    if let schedulerIdentity, SchedulerTurn.handOff(self, to: schedulerIdentity) {
      return
    }
    scheduleTask()
  }

  /// Always a real `scheduleTask`: used where others must get a turn (`yield`, hops). On a
  /// `DispatchQueue` the coroutine itself is the dispatched item (no closure, no block).
  func scheduleTask() {
    if let rawQueue = dispatchTarget?.rawQueue {  // a trivial field: no retain of the queue
      DirectDispatch.async(self, onRawQueue: rawQueue)
    } else if let queue = dispatchTarget?.queue {
      DirectDispatch.async(self, on: queue)
    } else {
      otherScheduler!.scheduleTask { [self] in SchedulerTurn.run(self) }
    }
  }

  // MARK: Reaction (a coroutine is a scheduler task)

  override func run() { while runSlice() {} }
  override var schedulerIdentity: ObjectIdentifier? { currentSchedulerIdentity }
  override func reschedule() { scheduleTask() }

  /// Runs the coroutine until it suspends, hops, yields or finishes. Returns whether it
  /// must run again at once (it was woken while suspending).
  func runSlice() -> Bool {
    guard let fiber = fiber ?? makeFiber() else { return false }
    let previous = cov_tls_load(ThreadSlot.coroutine)
    cov_tls_store(ThreadSlot.coroutine, Unmanaged.passUnretained(self).toOpaque())
    cov_fiber_resume(fiber)
    cov_tls_store(ThreadSlot.coroutine, previous)
    switch exit {
    case .suspend:
      return wait.confirmSuspended()
    case .reschedule:
      scheduleTask()
      return false
    case .finished:
      finish()
      return false
    }
  }

  private func makeFiber() -> OpaquePointer? {
    fiber = cov_fiber_create(stackSize, coroutineEntry, Unmanaged.passUnretained(self).toOpaque())
    if fiber == nil {
      let error = CoroutineStartError(stackSize: stackSize)
      body = nil
      if let onStartFailure { onStartFailure(error) } else { reportUnstartableCoroutine(error) }
      finish()
    }
    return fiber
  }

  /// The body, run on the coroutine's own stack by `coroutineEntry`.
  func runBody() {
    let body = self.body.take()  // moved out: no copy of the closure's context
    do { try body?() } catch {
      // A coroutine's error ends it. (Futures started with `coroutineFuture` capture theirs:
      // their bodies never throw.)
      UncaughtErrors.report(error, scope: scopeLink?.scope, file: startFile, line: startLine)
    }
    exit = .finished
  }

  private func finish() {
    awaitReaction = nil
    onStartFailure = nil
    finished.store(true, ordering: .sequentiallyConsistent)
    if hasCallbacks.load(ordering: .sequentiallyConsistent) { runCompletionCallbacks() }
  }

  /// Takes the registered callbacks (once: later calls find none) and runs them.
  private func runCompletionCallbacks() {
    let callbacks = completion.withCriticalSection { state -> [() -> Void] in
      state.isComplete = true
      defer { state.callbacks = [] }
      return state.callbacks
    }
    for callback in callbacks { callback() }
  }

  // MARK: Suspending (coroutine side)

  /// Suspends the coroutine until a waker handed to `register` resumes it.
  ///
  /// `register` runs on the coroutine before it switches out; it may resume synchronously.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled before a waker wins.
  @usableFromInline func suspend(_ register: (CoroutineWaker) -> Void) throws(CoroutineError) {
    let generation = try beginWait()
    register(CoroutineWaker(coroutine: self, generation: generation))
    try completeWait()
  }

  /// Opens the next await (a new generation of `wait`) and returns its generation.
  /// - Throws: `.canceled` if the coroutine is cancelled.
  @inline(__always)
  func beginWait() throws(CoroutineError) -> UInt64 {
    if canceled.load(ordering: .sequentiallyConsistent) { throw .canceled }
    generation &+= 1
    let generation = self.generation
    wait.begin(generation)
    // Pairs with `cancel()`: one of the two sees the other (both sequentially consistent).
    if canceled.load(ordering: .sequentiallyConsistent),
      wait.claim(generation, reason: WaitState.canceledWake)
    {
      _ = wait.wake()
      throw .canceled
    }
    return generation
  }

  /// Switches out unless the await was already woken; on return it has been.
  /// - Throws: `.canceled` if `cancel()` won the await.
  @inline(__always)
  func completeWait() throws(CoroutineError) {
    if wait.flags & WaitState.woken == 0 {
      exit = .suspend
      cov_fiber_suspend()
    }
    if wait.flags & WaitState.canceledWake != 0 { throw .canceled }
  }

  /// Suspends until `cell` is resolved, with the coroutine's `AwaitReaction` registered in the
  /// cell itself: one lock round trip to register, no allocation after the first await, and no
  /// closure or waker value in between.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled first.
  func awaitResolution(of cell: borrowing ResolutionCell) throws(CoroutineError) {
    let (reaction, _) = try registerAwait(in: cell)
    do {
      try completeWait()
    } catch {
      leaveChain(of: cell, reaction)
      throw error
    }
  }

  /// `awaitResolution(of:)` that gives up after `timeout`; returns true if it did. The reaction
  /// then leaves the cell's chain, as after a cancel, so nothing in the cell keeps the
  /// coroutine.
  func awaitResolution(
    of cell: borrowing ResolutionCell, timeout: DispatchTimeInterval
  ) throws(CoroutineError) -> Bool {
    let (reaction, generation) = try registerAwait(in: cell)
    let armed = armTimer(after: timeout, generation: generation)
    defer { if armed { disarmTimer() } }
    do {
      try completeWait()
    } catch {
      leaveChain(of: cell, reaction)
      throw error
    }
    guard wait.flags & WaitState.timedOutWake != 0 else { return false }
    leaveChain(of: cell, reaction)
    return true
  }

  /// Opens an await and registers the coroutine's reusable `AwaitReaction` in `cell`
  /// (unretained: `awaitReaction` keeps it alive until an await drops it). Returns it with the
  /// await's generation.
  @inline(__always)
  private func registerAwait(
    in cell: borrowing ResolutionCell
  ) throws(CoroutineError) -> (Unmanaged<AwaitReaction>, UInt64) {
    if awaitReaction == nil {
      awaitReaction = AwaitReaction(self, wakesInline: dispatchTarget == nil)
    }
    let reaction = Unmanaged.passUnretained(awaitReaction.unsafelyUnwrapped)
    let generation = try beginWait()
    let registered = reaction._withUnsafeGuaranteedRef { reaction in
      reaction.generation.store(generation, ordering: .relaxed)
      return cell.register(reaction)
    }
    if !registered, wait.claim(generation) {
      _ = wait.wake()  // resolved meanwhile: not suspended, so nothing to schedule
    }
    return (reaction, generation)
  }

  /// After an await that ended unresolved (cancelled or timed out): the reaction may still be
  /// in the chain. If a resolution has already taken the chain, its notifier may still read the
  /// reaction's link: never reuse it.
  private func leaveChain(of cell: borrowing ResolutionCell, _ reaction: Unmanaged<AwaitReaction>) {
    if !reaction._withUnsafeGuaranteedRef({ cell.unregister($0) }) { awaitReaction = nil }
  }

  /// Moves the coroutine to `scheduler` (it continues in a task there).
  func hop(to scheduler: any CoroutineScheduler) {
    let (identity, queue) = classifyScheduler(scheduler)
    currentSchedulerIdentity = identity
    dispatchTarget = queue.map(DirectDispatchTarget.init)
    otherScheduler = queue == nil ? scheduler : nil
    // Not in any chain between awaits (a cancelled await that might leave it behind drops it).
    awaitReaction?.resolvesInlineWhenTold = queue == nil
    exit = .reschedule
    cov_fiber_suspend()
  }

  /// Lets other work on the scheduler run, then continues.
  func yield() throws(CoroutineError) {
    if isCanceled { throw .canceled }
    exit = .reschedule
    cov_fiber_suspend()
  }

  /// Whether the coroutine runs on `scheduler` (same object) right now.
  func isOn(_ scheduler: any CoroutineScheduler) -> Bool {
    guard let identity = classifyScheduler(scheduler).identity else { return false }
    return identity == currentSchedulerIdentity
  }

  // MARK: Cancellation

  @usableFromInline var isCanceled: Bool { canceled.load(ordering: .relaxed) }

  /// Cancels the coroutine: its pending await throws `.canceled` promptly, later ones at once.
  @usableFromInline func cancel() {
    if canceled.exchange(true, ordering: .sequentiallyConsistent) { return }
    let generation = wait.currentGeneration
    if wait.claim(generation, reason: WaitState.canceledWake), wait.wake() { schedule() }
  }

  /// Registers `callback` to run when the coroutine finishes (at once if it has).
  func whenFinished(_ callback: @escaping () -> Void) {
    let alreadyComplete = completion.withCriticalSection { state -> Bool in
      if state.isComplete { return true }
      state.callbacks.append(callback)
      return false
    }
    if alreadyComplete { return callback() }
    hasCallbacks.store(true, ordering: .sequentiallyConsistent)
    // `finish` may have looked at `hasCallbacks` before it was set: then collect them here.
    if finished.load(ordering: .sequentiallyConsistent) { runCompletionCallbacks() }
  }

  var isFinished: Bool { finished.load(ordering: .sequentiallyConsistent) }
}
