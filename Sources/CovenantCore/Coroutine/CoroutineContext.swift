import CCoroutineContext
import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

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

  // The small fields first: they fill the base class's tail padding.
  private let canceled = InlineByteAtomic<Bool>(uninitialized: ())
  var exit = Exit.suspend
  /// What the coroutine waits for when it next switches out (a `CoroutineWaitKind`, with its
  /// timed flag): set by the coroutine before it suspends, hops or yields, read by its runner
  /// right after the switch, which records it in the registry entry.
  var pendingWaitKind: UInt8 = 0
  /// The coroutine's slot in the registry of live coroutines (`CoroutineRegistry`), from its
  /// start until it finishes; `COV_REGISTRY_NO_SLOT` before and after (or if the registry was
  /// full). Written before the coroutine is handed to its scheduler and when it finishes;
  /// read by whoever runs it.
  var registrySlot: UInt32 = COV_REGISTRY_NO_SLOT

  /// Written only by the coroutine itself (before it suspends or hops), read by whoever
  /// schedules it after a wake; the `WaitState` atomics order the two.
  /// The scheduler when it is not a `DispatchQueue` (then `nil`: see `queueBits`).
  // `Optional<…>` spelled out, here and below: a `T?` property is set to `nil` before the
  // initializer runs, which then assigns it again (a release of the `nil` and a retain of the
  // value, on every coroutine start).
  private var otherScheduler: Optional<any CoroutineScheduler>
  /// The identity of the scheduler (the object of a class scheduler; 0 for a value type).
  /// Atomic, as the queue below, because a coroutine snapshot reads both from its own thread
  /// (relaxed loads and stores are plain moves); a hop keeps the old scheduler alive until no
  /// snapshot can be reading it (`cov_registry_quiesce`).
  private let schedulerIdentityWord = InlineAtomic<UInt>(uninitialized: ())
  var currentSchedulerIdentity: ObjectIdentifier? {
    let bits = schedulerIdentityWord.load(ordering: .relaxed)
    // An `ObjectIdentifier` is the object's address, one word (the snapshot tests check the
    // layout); rebuilt without touching the object.
    return bits == 0 ? nil : unsafeBitCast(bits, to: ObjectIdentifier.self)
  }
  /// The scheduler when it is a `DispatchQueue`, the common case: the bits of a retained
  /// `Unmanaged<DispatchQueue>` (0: none; released by `deinit` or a hop). Not a stored
  /// `DispatchQueue?`, whose every read for a dispatch would be a retain/release pair; and the
  /// queue's `dispatch_queue_t` is read from it when a slice is dispatched (one load) rather
  /// than kept beside it: every coroutine carries these fields, and a suspended coroutine's
  /// size is what a million of them cost.
  private let queueWord = InlineAtomic<UInt>(uninitialized: ())
  private var queueBits: UInt { queueWord.load(ordering: .relaxed) }

  private var dispatchQueue: DispatchQueue? {
    queueBits == 0 ? nil : Self.queue(queueBits).takeUnretainedValue()
  }

  private static func queue(_ bits: UInt) -> Unmanaged<DispatchQueue> {
    Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
  }

  private static func retainedBits(_ queue: DispatchQueue?) -> UInt {
    queue.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
  }

  /// The scheduler the coroutine runs on now.
  var scheduler: any CoroutineScheduler { dispatchQueue ?? otherScheduler! }

  /// Whether that scheduler is a `DispatchQueue` (whose timers are `TimerQueue`'s).
  var isOnDispatchQueue: Bool { queueBits != 0 }

  /// Created on the first slice, not in `init`: a coroutine that has not run yet holds no
  /// stack, so creating many coroutines ahead of their turn costs no memory, and a coroutine
  /// started after another finished reuses its warm stack (or its shared stack's warm pages).
  ///
  /// One word for both: before the first slice, what the start asked for (`stackRequest`,
  /// tagged with the low bit), then the fiber (records are aligned, so the bit is clear).
  /// Atomic: a snapshot reads it from its own thread (released once the fiber is made).
  private let fiberOrRequestWord = InlineAtomic<UInt>(uninitialized: ())
  private var fiberOrRequest: UInt { fiberOrRequestWord.load(ordering: .relaxed) }

  /// The coroutine's fiber, once its first slice has made it.
  var fiber: OpaquePointer? {
    let word = fiberOrRequest
    return word & 1 == 0 ? OpaquePointer(bitPattern: word) : nil
  }

  /// What the start asked for; meaningful until the fiber is made.
  private var stackRequest: CoroutineStackRequest {
    CoroutineStackRequest(raw: Int(bitPattern: fiberOrRequest) >> 1)
  }

  private static func tagged(_ request: CoroutineStackRequest) -> UInt {
    UInt(bitPattern: request.raw << 1) | 1
  }
  /// Told instead of running the body when no stack can be had: a
  /// `CoroutineStartFailureReceiver`, kept as one word. Dropped when the coroutine finishes: it
  /// may be an object that keeps the coroutine (a `coroutineFuture`'s future).
  private var startFailureReceiver: Optional<AnyObject>
  private var body: Optional<() throws -> Void>
  /// Where the coroutine was started, for the report of an error its body throws.
  let startFile: StaticString
  /// 32 bits: it fits in the padding after `startFile`.
  let startLine: UInt32
  /// The scope it was started in (`startCoroutine(in:)`), whose handler gets an error its body
  /// throws; `nil` for most coroutines, which then carry no weak reference (a weak field costs
  /// runtime calls on every coroutine's creation and destruction).
  var scopeLink: WeakScopeLink?

  let wait = WaitState()
  /// The coroutine is its own registration in the cell it awaits (see `awaitResolution`):
  /// the generation of that await, plus two flags: `staleRegistration` while a cell that the
  /// coroutine gave up waiting for may still read its chain link, `notifiedRegistration` once
  /// that cell's notifier is done with it.
  private let registration = InlineAtomic<UInt64>(uninitialized: ())
  private static let staleRegistration: UInt64 = 1 << 63
  private static let notifiedRegistration: UInt64 = 1 << 62
  private static let registrationFlags = staleRegistration | notifiedRegistration
  /// The `whenFinished` callbacks: 0 (none yet), `finishedMark` once the coroutine has
  /// finished, else the bits of a retained `CompletionCallback`, the last one added (a
  /// lock-free stack: each side's single atomic step decides who runs the callbacks), with
  /// `removingMark` while a waiter that gave up takes its callback out (see
  /// `CoroutineContext+Completion.swift`).
  let completion = InlineAtomic<UInt>(uninitialized: ())
  /// The coroutine's timer (see `CoroutineTimerEntry`), reused by every timed wait; created by
  /// the first one.
  var timerEntry: CoroutineTimerEntry?

  /// Creates a coroutine that has not started yet.
  ///
  /// - Parameter startFailureReceiver: told instead of running the body when no stack can be
  ///   allocated for the first slice; by default the failure is reported on stderr.
  @usableFromInline init(
    scheduler: any CoroutineScheduler, stack: CoroutineStackRequest = .automatic,
    startFailureReceiver: (any CoroutineStartFailureReceiver)? = nil, file: StaticString,
    line: UInt, body: @escaping () throws -> Void
  ) {
    startFile = file
    startLine = UInt32(truncatingIfNeeded: line)
    let (identity, queue) = classifyScheduler(scheduler)
    otherScheduler = queue == nil ? scheduler : nil
    self.startFailureReceiver = startFailureReceiver
    self.body = body
    super.init()
    initializeAtomics(identity: Self.bits(identity), queue: Self.retainedBits(queue), stack: stack)
  }

  /// Creates a coroutine that has not started yet, on a dispatch queue (the common case, without
  /// an existential).
  @usableFromInline
  init(
    queue: DispatchQueue, stack: CoroutineStackRequest, file: StaticString, line: UInt,
    body: @escaping () throws -> Void
  ) {
    startFile = file
    startLine = UInt32(truncatingIfNeeded: line)
    otherScheduler = nil
    startFailureReceiver = nil
    self.body = body
    super.init()
    initializeAtomics(
      identity: UInt(bitPattern: Unmanaged.passUnretained(queue).toOpaque()),
      queue: Self.retainedBits(queue), stack: stack)
  }

  /// The first values of the atomics (built uninitialized: see
  /// `InlineAtomic.init(uninitialized:)`).
  @inline(__always)
  private func initializeAtomics(identity: UInt, queue: UInt, stack: CoroutineStackRequest) {
    canceled.store(false, ordering: .relaxed)
    schedulerIdentityWord.store(identity, ordering: .relaxed)
    queueWord.store(queue, ordering: .relaxed)
    fiberOrRequestWord.store(Self.tagged(stack), ordering: .relaxed)
    registration.store(0, ordering: .relaxed)
    completion.store(0, ordering: .relaxed)
  }

  deinit {
    // Only reachable when finished or never run: a suspended coroutine's own frame keeps it
    // alive. (A finished coroutine has no fiber left: `finish()` destroyed it.)
    if completion.load(ordering: .acquiring) != Self.finishedMark { endUnrun() }
    if queueBits != 0 { Self.queue(queueBits).release() }
  }

  /// The end of a coroutine dropped without having run: its scheduler let its task go (an
  /// event loop that shut down, an `OperationQueue` after `cancelAllOperations()`; a scheduler
  /// must run every task, but not all do). It leaves the registry before anything a snapshot
  /// reads goes away; the future it was to complete (its start-failure receiver) fails with
  /// `CoFutureError.canceled`, as a future nobody can complete any more does; and whoever waits
  /// for it to finish (`join()`, its scope) is told, as they would be had it run. Out of line:
  /// it almost never happens.
  @inline(never)
  private func endUnrun() {
    CoroutineRegistry.leave(registrySlot)
    registrySlot = COV_REGISTRY_NO_SLOT
    if let receiver = startFailureReceiver.take() as? any CoroutineStartFailureReceiver {
      receiver.coroutineFailedToStart(CoFutureError.canceled)
    }
    runFinishCallbacks()
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

  /// Registers the coroutine (see `CoroutineRegistry`) and schedules its first slice on its
  /// scheduler.
  @usableFromInline func start() {
    registrySlot = CoroutineRegistry.enter(
      UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()))
    scheduleInline()
  }

  /// `start()` for a coroutine with a name (given at start: `startCoroutine(name:)`), which
  /// snapshots show. Separate, so that the common start passes no optional string around.
  @usableFromInline func start(name: String?) {
    guard let name else { return start() }
    registrySlot = CoroutineRegistry.enter(
      UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), name: name)
    schedule()
  }

  /// Hands the coroutine to its scheduler (through the running task's hand-off slot when that
  /// task serves the same scheduler).
  func schedule() { scheduleInline() }

  /// `schedule()`, inlined where it is on the path of every coroutine (the start).
  @inline(__always)
  private func scheduleInline() {
    if let schedulerIdentity, SchedulerTurn.handOff(self, to: schedulerIdentity) {
      return
    }
    scheduleTask()
  }

  /// Always a real `scheduleTask`: used where others must get a turn (`yield`, hops). On a
  /// `DispatchQueue` the coroutine itself is the dispatched item (no closure, no block).
  func scheduleTask() {
    if queueBits != 0 {
      let queue = Self.queue(queueBits)  // no retain: the coroutine keeps it
      if DirectDispatch.isAvailable {
        DirectDispatch.async(
          self, onRawQueue: queue._withUnsafeGuaranteedRef(DirectDispatch.rawQueue))
      } else {
        DirectDispatch.async(self, on: queue.takeUnretainedValue())
      }
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
    let slot = registrySlot
    let fiber: OpaquePointer
    if let existing = self.fiber {
      fiber = existing
      cov_registry_note_resuming(slot, fiber)
    } else {
      // Cancelled before its body started (its scope was, say): the body never runs, as with
      // Kotlin's default start, and no stack is taken. One relaxed load of a byte.
      if _slowPath(isCanceled) {
        endCanceledBeforeStart()
        return false
      }
      // The first slice: the entry still says "created", which snapshots read as running once
      // the fiber exists (no store on the path of coroutines that never switch out).
      guard let made = makeFiber() else { return false }
      fiber = made
    }
    let previous = cov_tls_load(ThreadSlot.coroutine)
    cov_tls_store(ThreadSlot.coroutine, Unmanaged.passUnretained(self).toOpaque())
    let status = cov_fiber_resume(fiber)
    cov_tls_store(ThreadSlot.coroutine, previous)
    // Parked: its shared stack is running another coroutine; that one's switch-out hands this
    // one back to `schedule()` (see `SharedStackParking`).
    if _slowPath(status != Int32(COV_FIBER_RAN)) { return false }
    // The registry entry is written here, after the switch out and before anyone else may
    // resume the coroutine (the wake-up state machine, or the scheduler, hands it on after
    // this), so its writers take turns and a snapshot that sees it switched out sees its
    // frames settled.
    switch exit {
    case .suspend:
      cov_registry_note_switched_out(slot, UInt64(COV_ACTIVITY_SUSPENDED), UInt64(pendingWaitKind))
      return wait.confirmSuspended()
    case .reschedule:
      cov_registry_note_switched_out(slot, UInt64(COV_ACTIVITY_READY), UInt64(pendingWaitKind))
      scheduleTask()
      return false
    case .finished:
      finish()
      return false
    }
  }

  private func makeFiber() -> OpaquePointer? {
    let argument = Unmanaged.passUnretained(self).toOpaque()
    let request = stackRequest
    let fiber: OpaquePointer?
    // One group of shared stacks per scheduler (value-type schedulers share the nil group).
    let group = cov_stack_group(currentSchedulerIdentity.flatMap(SchedulerStackSettings.groupKey))
    let configured = group.map { cov_stack_group_is_configured($0) != 0 } == true
    let settings = configured ? SchedulerStackSettings.settings(for: currentSchedulerIdentity) : nil
    if usesSharedStack(request, settings?.mode) {
      SharedStackParking.install()
      // A configured group gets its scheduler's minimum every time (the default if the setting
      // was another scheduler's, at the same address); others keep the default a group starts
      // with, or is reset to when it moves to another scheduler.
      let minimum =
        settings?.sharedStackCount ?? (configured ? Int(cov_shared_stacks_default_min()) : 0)
      fiber = cov_fiber_create_shared(group, minimum, coroutineEntry, argument)
    } else {
      fiber = cov_fiber_create(request.dedicatedSize, coroutineEntry, argument)
    }
    guard let fiber else {
      failToStart(request, errorNumber: errno)
      return nil
    }
    precondition(UInt(bitPattern: fiber) & 1 == 0, "fiber records are at least 2-aligned")
    fiberOrRequestWord.store(UInt(bitPattern: fiber), ordering: .releasing)
    return fiber
  }

  /// Cancelled before its first slice: the coroutine ends without running its body, as one
  /// without a stack does. A future it was to complete (its start-failure receiver:
  /// `coroutineFuture`) fails with `CoroutineError.canceled`, what an await of the body would
  /// have thrown, unless it failed already (a cancelled future); nothing is reported (a
  /// cancellation is no error). Out of line: it rarely happens.
  @inline(never)
  private func endCanceledBeforeStart() {
    body = nil
    if let receiver = startFailureReceiver as? any CoroutineStartFailureReceiver {
      receiver.coroutineFailedToStart(CoroutineError.canceled)
    }
    finish()
  }

  /// No stack could be had: the coroutine ends without running its body.
  @inline(never)
  private func failToStart(_ request: CoroutineStackRequest, errorNumber: Int32) {
    let error = CoroutineStartError(stackSize: request.dedicatedSize, errorNumber: errorNumber)
    body = nil
    if let receiver = startFailureReceiver as? any CoroutineStartFailureReceiver {
      receiver.coroutineFailedToStart(error)
    } else {
      reportUnstartableCoroutine(error)
    }
    finish()
  }

  /// Whether this coroutine runs on a shared stack: its start's choice, else its scheduler's
  /// (`schedulerMode`), else `Coroutine.defaultStackMode`.
  private func usesSharedStack(
    _ request: CoroutineStackRequest, _ schedulerMode: CoroutineStackMode?
  ) -> Bool {
    switch request.raw {
    case CoroutineStackRequest.sharedRaw: return true
    case 0: return (schedulerMode ?? Coroutine.defaultStackMode) == .shared
    default: return false
    }
  }

  /// The body, run on the coroutine's own stack by `coroutineEntry` (inlined there: one frame
  /// less to copy when the coroutine's stack is shared).
  @inline(__always)
  func runBody() {
    let body = self.body.take()  // moved out: no copy of the closure's context
    do { try body?() } catch {
      // A coroutine's error ends it. (Futures started with `coroutineFuture` capture theirs:
      // their bodies never throw.)
      reportUncaught(error)
    }
    exit = .finished
  }

  /// Out of line: inlined, the report's temporaries would enlarge the coroutine's first frame,
  /// which a suspended coroutine on a shared stack keeps in its copy.
  @inline(never)
  private func reportUncaught(_ error: any Error) {
    UncaughtErrors.report(error, scope: scopeLink?.scope, file: startFile, line: UInt(startLine))
  }

  /// Marks the coroutine finished and runs the callbacks registered so far, in the order they
  /// were added (later ones run at once in `whenFinished`).
  private func finish() {
    CoroutineRegistry.leave(registrySlot)
    registrySlot = COV_REGISTRY_NO_SLOT
    startFailureReceiver = nil
    destroyFiber()
    runFinishCallbacks()
  }

  /// Gives the finished coroutine's stack (a dedicated stack, or a shared stack's copy buffer)
  /// and fiber record back at once, rather than when the last reference to the coroutine goes:
  /// a finished coroutine may be kept for long (by a callback it handed out, a joiner). Called
  /// by `finish()` on the runner's stack, after `cov_fiber_resume` has returned with the fiber
  /// marked finished (the fiber layer allows its destruction from then on), and after the
  /// coroutine has left the registry (no snapshot reads the fiber any more).
  @inline(__always)
  private func destroyFiber() {
    let word = fiberOrRequest
    // A coroutine that could not get a stack still holds its request (tagged): no fiber.
    guard word & 1 == 0, let fiber = OpaquePointer(bitPattern: word) else { return }
    fiberOrRequestWord.store(0, ordering: .relaxed)
    cov_fiber_destroy(fiber)
  }

  // MARK: Suspending (coroutine side)

  /// Suspends the coroutine until a waker handed to `register` resumes it.
  ///
  /// `register` runs on the coroutine before it switches out; it may resume synchronously.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled before a waker wins.
  ///
  /// `kind` and `detail` (see `CoroutineWaitKind`) say what the wait is for, in coroutine
  /// snapshots.
  @usableFromInline func suspend(
    _ kind: CoroutineWaitKind, detail: UInt = 0, _ register: (CoroutineWaker) -> Void
  ) throws(CoroutineError) {
    let generation = try beginWait()
    register(CoroutineWaker(coroutine: self, generation: generation))
    noteWait(kind, detail: detail)
    try completeWait()
  }

  /// Records what the await now opening is for, for coroutine snapshots: the kind until the
  /// runner stores it with the switch-out, the detail in the fiber record at once.
  @inline(__always)
  func noteWait(_ kind: CoroutineWaitKind, timed: Bool = false, detail: UInt) {
    pendingWaitKind = kind.raw(timed: timed)
    // The coroutine runs, so its fiber exists.
    cov_fiber_note_wait_detail(fiber.unsafelyUnwrapped, detail)
  }

  /// Opens the next await (a new generation of `wait`) and returns its generation.
  /// - Throws: `.canceled` if the coroutine is cancelled.
  @inline(__always)
  func beginWait() throws(CoroutineError) -> UInt64 {
    // Before anything of this await: what it waits for may be queued on this stack.
    ResolutionDrain.tellQueuedBeforeWaiting()
    if canceled.load(ordering: .sequentiallyConsistent) { throw .canceled }
    // Only the coroutine itself opens generations: the word's own is the last one it opened.
    let generation = wait.currentGeneration &+ 1
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

  /// Suspends until `cell` is resolved, with the coroutine itself registered in the cell: one
  /// lock round trip to register, no allocation, and no closure or waker value in between.
  ///
  /// A cancelled await takes the coroutine out of the chain again; if a resolution had already
  /// taken the chain, its notifier may still read the coroutine's link, so until that notifier
  /// has called `observedResolution` (which clears `staleRegistration`) later awaits register
  /// an `AwaitReaction` of their own instead.
  ///
  /// Returns whether the await was cancelled (rather than throwing: the caller, which uses the
  /// coroutine unretained, then needs no closure frame that can throw; with shared stacks
  /// every frame between the body and the switch is copied when the coroutine is evicted).
  func awaitResolution(of cell: borrowing ResolutionCell, awaiting type: Any.Type) -> Bool {
    do { try awaitResolutionThrowing(of: cell, awaiting: type) } catch { return true }
    return false
  }

  /// The current coroutine's `awaitResolution`, with the coroutine used unretained (its own
  /// first frame keeps it alive while its body runs).
  /// - Throws: `.calledOutsideCoroutine` outside a coroutine; `.canceled` if the coroutine is
  ///   or becomes cancelled first.
  static func awaitCurrent(
    resolutionOf cell: borrowing ResolutionCell, awaiting type: Any.Type
  ) throws(CoroutineError) {
    guard let coroutine = currentUnmanaged else { throw .calledOutsideCoroutine }
    if coroutine._withUnsafeGuaranteedRef({ $0.awaitResolution(of: cell, awaiting: type) }) {
      throw .canceled
    }
  }

  @inline(__always)
  private func awaitResolutionThrowing(
    of cell: borrowing ResolutionCell, awaiting type: Any.Type
  ) throws(CoroutineError) {
    let generation = try beginWait()
    noteWait(.resolution, detail: metadataBits(type))
    guard _fastPath(registration.load(ordering: .acquiring) & Self.staleRegistration == 0) else {
      let reaction = AwaitReaction(self, generation: generation, wakesInline: queueBits == 0)
      _ = try awaitResolution(of: cell, through: reaction)
      return
    }
    register(in: cell, generation: generation)
    do {
      try completeWait()
    } catch {
      leaveChain(of: cell)
      throw error
    }
  }

  /// `awaitResolution(of:)` that gives up after `timeout`; returns true if it did. The
  /// registration then leaves the cell's chain, as after a cancel, so nothing in the cell keeps
  /// the coroutine.
  /// - Throws: `.canceled` if the coroutine is or becomes cancelled first.
  func awaitResolution(
    of cell: borrowing ResolutionCell, awaiting type: Any.Type, timeout: DispatchTimeInterval
  ) throws(CoroutineError) -> Bool {
    let generation = try beginWait()
    noteWait(.resolution, timed: true, detail: metadataBits(type))
    guard registration.load(ordering: .acquiring) & Self.staleRegistration == 0 else {
      let reaction = AwaitReaction(self, generation: generation, wakesInline: queueBits == 0)
      return try awaitResolution(of: cell, through: reaction, timeout: timeout)
    }
    register(in: cell, generation: generation)
    let armed = armTimer(after: timeout, generation: generation)
    defer { if armed { disarmTimer() } }
    do {
      try completeWait()
    } catch {
      leaveChain(of: cell)
      throw error
    }
    guard wait.flags & WaitState.timedOutWake != 0 else { return false }
    leaveChain(of: cell)
    return true
  }

  /// Registers the coroutine itself in `cell` for await `generation` (or, if the cell is
  /// resolved already, wins that await at once).
  @inline(__always)
  private func register(in cell: borrowing ResolutionCell, generation: UInt64) {
    registration.store(generation, ordering: .relaxed)
    // Whether telling it resumes it on the spot: on a scheduler other than a dispatch queue
    // (set here, where the coroutine is in no chain, as its scheduler may change between awaits).
    resolvesInlineWhenTold = queueBits == 0
    let registered = Unmanaged.passUnretained(self)._withUnsafeGuaranteedRef { cell.register($0) }
    if !registered, wait.claim(generation) {
      _ = wait.wake()  // resolved meanwhile: not suspended, so nothing to schedule
    }
  }

  /// After an await that ended unresolved (cancelled or timed out): the coroutine may still be
  /// in `cell`'s chain. If a resolution took the chain, its notifier may still read the link:
  /// unless it is already done (notified), it clears the stale mark when it is.
  @inline(never)
  private func leaveChain(of cell: borrowing ResolutionCell) {
    if cell.unregister(self) { return }
    let old = registration.bitwiseOr(Self.staleRegistration, ordering: .acquiringAndReleasing)
      .oldValue
    if old & Self.notifiedRegistration != 0 {
      registration.bitwiseAnd(~Self.staleRegistration, ordering: .relaxed)
    }
  }

  /// The rest of an await registered through `reaction` (while the coroutine itself may still
  /// be linked into a cell it gave up on), with a timer if `timeout` is given. Returns whether
  /// that timer won.
  @inline(never)
  private func awaitResolution(
    of cell: borrowing ResolutionCell, through reaction: AwaitReaction,
    timeout: DispatchTimeInterval? = nil
  ) throws(CoroutineError) -> Bool {
    if !cell.register(reaction), wait.claim(reaction.generation) { _ = wait.wake() }
    let armed = timeout.map { armTimer(after: $0, generation: reaction.generation) } ?? false
    defer { if armed { disarmTimer() } }
    do {
      try completeWait()
    } catch {
      _ = cell.unregister(reaction)  // if a resolution took it, the reaction is simply dropped
      throw error
    }
    guard wait.flags & WaitState.timedOutWake != 0 else { return false }
    _ = cell.unregister(reaction)
    return true
  }

  /// The cell this coroutine awaits is resolved: resumes the await the registration was made
  /// for (a stale notification finds its claim refused). The notifier has read the link before
  /// calling this, so afterwards the coroutine may register itself again.
  override func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer) {
    // An add, not an or (one instruction, no compare-and-swap loop): the bit is clear, as each
    // registration is notified at most once and the coroutine clears it when it registers.
    let old = registration.wrappingAdd(Self.notifiedRegistration, ordering: .acquiringAndReleasing)
      .oldValue
    if wait.claim(old & ~Self.registrationFlags), wait.wake() { schedule() }
    if old & Self.staleRegistration != 0 {
      registration.bitwiseAnd(~Self.staleRegistration, ordering: .releasing)
    }
  }

  /// Moves the coroutine to `scheduler` (it continues in a task there).
  func hop(to scheduler: any CoroutineScheduler) {
    let (identity, queue) = classifyScheduler(scheduler)
    let previousQueue = queueBits
    // A snapshot that has not seen the new scheduler is seen by `cov_registry_quiesce`, which
    // waits for it before the old one is released: the quiesce's sequentially consistent fence
    // orders these stores before its look at the snapshot's flag (the snapshot raises the flag,
    // sequentially consistent, before it reads them), so releasing stores are enough.
    schedulerIdentityWord.store(Self.bits(identity), ordering: .releasing)
    queueWord.store(Self.retainedBits(queue), ordering: .releasing)
    let previousOther = otherScheduler
    otherScheduler = queue == nil ? scheduler : nil
    cov_registry_quiesce(registrySlot)
    if previousQueue != 0 { Self.queue(previousQueue).release() }
    withExtendedLifetime(previousOther) {}
    pendingWaitKind = CoroutineWaitKind.hop.rawValue
    exit = .reschedule
    cov_fiber_suspend()
  }

  private static func bits(_ identity: ObjectIdentifier?) -> UInt {
    identity.map { UInt(bitPattern: $0) } ?? 0
  }

  /// Lets other work on the scheduler run, then continues.
  func yield() throws(CoroutineError) {
    if isCanceled { throw .canceled }
    pendingWaitKind = CoroutineWaitKind.yield.rawValue
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

  // MARK: Snapshots

  /// What a coroutine snapshot reads of the coroutine, from the snapshot's thread, while the
  /// registry keeps the coroutine from finishing (`cov_registry_visit`). Only immutable fields
  /// and atomics are read; the scheduler is retained for the snapshot (a hop keeps the old one
  /// alive until no snapshot reads it).
  func debugFields() -> CoroutineDebugFields {
    let queue = queueWord.load(ordering: .sequentiallyConsistent)
    let identity = schedulerIdentityWord.load(ordering: .sequentiallyConsistent)
    let word = fiberOrRequestWord.load(ordering: .acquiring)
    return CoroutineDebugFields(
      queue: queue == 0 ? nil : Self.queue(queue).retain(),
      schedulerObject: queue != 0 || identity == 0
        ? nil : Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: identity)!).retain(),
      fiber: word & 1 == 0 ? OpaquePointer(bitPattern: word) : nil,
      startFile: startFile, startLine: startLine,
      scope: scopeLink?.scope.map(ObjectIdentifier.init), waitFlags: wait.flags)
  }
}
