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

/// One coroutine: its fiber (stack + saved registers), the scheduler it continues on, its
/// cancellation flag and its per-await `WaitState`.
///
/// Lifetime: the coroutine's own first frame holds a strong reference until the body returns
/// or throws, so a suspended coroutine stays alive (with its stack) until it is resumed and
/// finishes: frames are never skipped. Runners hold a reference while they run a slice.
@usableFromInline
// `@unchecked Sendable`: the fields other threads touch are atomics (`canceled`, `wait`,
// `registration`, `completion`, the scheduler and fiber words); the others belong to whoever
// runs the coroutine, and the runners take turns through `WaitState` and the scheduler.
final class CoroutineContext: Reaction, @unchecked Sendable {
  /// What the coroutine asked for when it last switched out; read by the runner on the same
  /// thread right after the switch, so it needs no synchronisation.
  enum Exit {
    case suspend
    case reschedule
    case finished
  }

  // The small fields first: they fill the base class's tail padding.
  let canceled = InlineByteAtomic<Bool>(uninitialized: ())
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
  var otherScheduler: Optional<any CoroutineScheduler>
  /// The identity of the scheduler (the object of a class scheduler; 0 for a value type).
  /// Atomic, as the queue below, because a coroutine snapshot reads both from its own thread
  /// (relaxed loads and stores are plain moves); a hop keeps the old scheduler alive until no
  /// snapshot can be reading it (`cov_registry_quiesce`).
  let schedulerIdentityWord = InlineAtomic<UInt>(uninitialized: ())
  var currentSchedulerIdentity: ObjectIdentifier? {
    let bits = schedulerIdentityWord.load(ordering: .relaxed)
    // An `ObjectIdentifier` is the object's address, one word (the snapshot tests check the
    // layout); rebuilt without touching the object.
    return bits == 0 ? nil : unsafeBitCast(bits, to: ObjectIdentifier.self)
  }
  /// The scheduler when it is a `DispatchQueue`, the common case, retained (`none` for another
  /// scheduler; released by `deinit` or a hop). Not a stored
  /// `DispatchQueue?`, whose every read for a dispatch would be a retain/release pair; and the
  /// queue's `dispatch_queue_t` is read from it when a slice is dispatched (one load) rather
  /// than kept beside it: every coroutine carries these fields, and a suspended coroutine's
  /// size is what a million of them cost.
  let queueWord = InlineAtomic<UnsafeRetainedBits<DispatchQueue>>(uninitialized: ())
  var queueBits: UnsafeRetainedBits<DispatchQueue> { queueWord.load(ordering: .relaxed) }

  var dispatchQueue: DispatchQueue? {
    queueBits.isNone ? nil : queueBits.unmanaged.takeUnretainedValue()
  }

  static func retainedBits(_ queue: DispatchQueue?) -> UnsafeRetainedBits<DispatchQueue> {
    queue.map(UnsafeRetainedBits.init(retaining:)) ?? .none
  }

  /// The scheduler the coroutine runs on now.
  var scheduler: any CoroutineScheduler { dispatchQueue ?? otherScheduler! }

  /// Whether that scheduler is a `DispatchQueue` (whose timers are `TimerQueue`'s).
  var isOnDispatchQueue: Bool { !queueBits.isNone }

  /// Created on the first slice, not in `init`: a coroutine that has not run yet holds no
  /// stack, so creating many coroutines ahead of their turn costs no memory, and a coroutine
  /// started after another finished reuses its warm stack (or its shared stack's warm pages).
  ///
  /// One word for both: before the first slice, what the start asked for (`stackRequest`,
  /// tagged with the low bit), then the fiber (records are aligned, so the bit is clear).
  /// Atomic: a snapshot reads it from its own thread (released once the fiber is made).
  let fiberOrRequestWord = InlineAtomic<UInt>(uninitialized: ())
  var fiberOrRequest: UInt { fiberOrRequestWord.load(ordering: .relaxed) }

  /// The coroutine's fiber, once its first slice has made it.
  var fiber: OpaquePointer? {
    let word = fiberOrRequest
    return word & 1 == 0 ? OpaquePointer(bitPattern: word) : nil
  }

  /// What the start asked for; meaningful until the fiber is made.
  var stackRequest: CoroutineStackRequest {
    CoroutineStackRequest(raw: Int(bitPattern: fiberOrRequest) >> 1)
  }

  static func tagged(_ request: CoroutineStackRequest) -> UInt {
    UInt(bitPattern: request.raw << 1) | 1
  }
  /// Told instead of running the body when no stack can be had: a
  /// `CoroutineStartFailureReceiver`, kept as one word. Dropped when the coroutine finishes: it
  /// may be an object that keeps the coroutine (a `coroutineFuture`'s future).
  var startFailureReceiver: Optional<AnyObject>
  var body: Optional<() throws -> Void>
  /// Where the coroutine was started, for the report of an error its body throws.
  let startFile: StaticString
  /// 32 bits: it fits in the padding after `startFile`.
  let startLine: UInt32
  /// The scope it was started in (`startCoroutine(in:)`), whose handler gets an error its body
  /// throws; `nil` for most coroutines, which then carry no weak reference (a weak field costs
  /// runtime calls on every coroutine's creation and destruction).
  var scopeLink: WeakScopeLink?

  let wait = WaitState()
  /// The coroutine is its own registration in the cell it awaits
  /// (`CoroutineContext+AwaitResolution.swift`): the generation of that await, plus two flags:
  /// `staleRegistration` while a cell that the coroutine gave up waiting for may still read its
  /// chain link, `notifiedRegistration` once that cell's notifier is done with it.
  let registration = InlineAtomic<UInt64>(uninitialized: ())
  /// The `whenFinished` callbacks: 0 (none yet), `finishedMark` once the coroutine has
  /// finished, else the bits of a retained `CompletionCallback`, the last one added (a
  /// lock-free stack: each side's single atomic step decides who runs the callbacks), with
  /// `removingMark` while a waiter that gave up takes its callback out (see
  /// `CoroutineContext+Completion.swift`).
  let completion = InlineAtomic<CallbackBits>(uninitialized: ())
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
  private func initializeAtomics(
    identity: UInt, queue: UnsafeRetainedBits<DispatchQueue>, stack: CoroutineStackRequest
  ) {
    canceled.store(false, ordering: .relaxed)
    schedulerIdentityWord.store(identity, ordering: .relaxed)
    queueWord.store(queue, ordering: .relaxed)
    fiberOrRequestWord.store(Self.tagged(stack), ordering: .relaxed)
    registration.store(0, ordering: .relaxed)
    completion.store(.none, ordering: .relaxed)
  }

  deinit {
    // Only reachable when finished or never run: a suspended coroutine's own frame keeps it
    // alive. (A finished coroutine has no fiber left: `finish()` destroyed it.)
    if completion.load(ordering: .acquiring) != Self.finishedMark { endUnrun() }
    if !queueBits.isNone { queueBits.release() }
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
    assert(fiber == nil, "a started coroutine is kept alive by its own frame until it finishes")
    CoroutineRegistry.leave(registrySlot)
    registrySlot = COV_REGISTRY_NO_SLOT
    if let receiver = startFailureReceiver.take() as? any CoroutineStartFailureReceiver {
      receiver.coroutineDroppedUnrun()
    }
    runFinishCallbacks()
  }

  /// The coroutine whose body is running on this thread.
  static var current: CoroutineContext? { currentUnmanaged?.takeUnretainedValue() }

  /// `current`, unretained: code running inside the body may use it without reference
  /// counting, as the coroutine's own first frame keeps it alive.
  static var currentUnmanaged: Unmanaged<CoroutineContext>? {
    ThreadSlot.load(ThreadSlot.coroutine).map { Unmanaged.fromOpaque($0) }
  }

  /// Whether this coroutine's body is what runs on this thread now (for assertions).
  var isRunningHere: Bool {
    Self.currentUnmanaged?.toOpaque() == Unmanaged.passUnretained(self).toOpaque()
  }

  /// The current coroutine, or `calledOutsideCoroutine`.
  @usableFromInline static func requireCurrent() throws(CoroutineError) -> CoroutineContext {
    guard let current else { throw .calledOutsideCoroutine }
    return current
  }

  // MARK: Reaction (a coroutine is a scheduler task)

  override func run() { while runSlice() {} }
  override var schedulerIdentity: ObjectIdentifier? { currentSchedulerIdentity }
  override func reschedule() { scheduleTask() }

  /// The cell this coroutine awaits is resolved (`CoroutineContext+AwaitResolution.swift`).
  override func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer) {
    registrationNotified()
  }
}
