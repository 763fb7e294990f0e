import CovenantCore
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// A SwiftNIO `EventLoop` as a Covenant `CoroutineScheduler`: coroutines started on it run on
/// the loop's thread and continue there after every `await`.
///
/// There is exactly one scheduler per loop (`eventLoop.coroutineScheduler`), because Covenant
/// matches schedulers by object identity: a coroutine that wakes another coroutine of the same
/// loop hands it over in the same loop task instead of a new `execute`.
///
/// ## How tasks reach the loop
/// - **Inside a turn** (this thread is the loop's thread and is running coroutine work of this
///   scheduler, or the end of a NIO callback of this module's bridges and channels): the task is
///   queued locally and runs right after the current item, in the same loop task — no
///   `execute`, no wake-up. After `turnBudget` such items the rest is sent through one
///   `execute`, so I/O is not starved. When a turn ends, the writes its coroutines made on
///   `NIOCoroutineChannel`s are flushed, one flush per channel.
/// - **In a `withTurn`** (a NIO callback of yours): the task waits for the loop task that all
///   `withTurn`s of this loop iteration share, so a burst of wake-ups resumes each coroutine
///   once.
/// - **Otherwise** (another thread, or the loop thread outside a turn, e.g. a channel handler
///   starting a coroutine): the task goes into an inbox, and one `execute` drains the inbox;
///   tasks arriving before that drain runs share it.
///
/// ## Shutdown
/// Every coroutine started through this scheduler's (or the `EventLoop` extension's)
/// `startCoroutine`/`coroutineFuture` is tracked. When the loop shuts down, they are all
/// cancelled: a pending `await` throws `CoroutineError.canceled`, later ones throw at once, and
/// their futures fail with `EventLoopError.shutdown`. Work that becomes ready after the loop
/// has stopped runs on a private serial dispatch queue instead (a shut-down loop drops tasks),
/// and timers still pending at the shutdown fire then, early (NIO fails them rather than
/// running them), so no coroutine is left suspended forever by the shutdown itself.
public final class EventLoopCoroutineScheduler: CoroutineScheduler, @unchecked Sendable {
  /// The loop this scheduler runs tasks on.
  public let eventLoop: any EventLoop

  /// How many locally queued items one loop task runs before handing the rest back to the loop
  /// with a single `execute`.
  public static let turnBudget = 256

  // Loop-thread-only state: read and written only when `eventLoop.inEventLoop` is true.
  // `@exclusivity(unchecked)`: confined to one thread and never accessed by two overlapping
  // `inout`s, which the run-time exclusivity check would otherwise verify at every access of
  // every turn.
  @exclusivity(unchecked) private var inTurn = false
  @exclusivity(unchecked) private var local: [() -> Void] = []
  /// What `withTurn`s of the current loop iteration made ready, for their shared loop task.
  @exclusivity(unchecked) private var batch: [() -> Void] = []
  @exclusivity(unchecked) private var batchScheduled = false
  /// What runs when the current turn ends (`atTurnEnd`): the first in a slot of its own (a
  /// turn usually flushes one channel: no array traffic), any others after it, in order.
  @exclusivity(unchecked) private var turnEndAction: (any TurnEndAction)?
  @exclusivity(unchecked) private var moreTurnEndActions: [any TurnEndAction] = []
  /// The loop tasks that run `batch` and drain the inbox, made once in `init` (a closure per
  /// `execute` would be an allocation per wake-up) and never changed after it. Weak: the
  /// scheduler must not keep itself alive.
  private var runBatch: (@Sendable () -> Void)!
  private var drainInboxTask: (@Sendable () -> Void)!

  private struct Inbox: @unchecked Sendable {
    var tasks: [() -> Void] = []
    var drainScheduled = false
    var isShutDown = false
  }

  /// A pthread mutex (`NIOLock`) rather than `Synchronization.Mutex`: ThreadSanitizer sees
  /// its hand-overs, so the whole scheduler is checked under TSan.
  private let inbox = NIOLockedValueBox(Inbox())
  private let executes = Atomic<Int>(0)
  private let shutDownFlag = Atomic<Bool>(false)
  /// The coroutines started here, cancelled together when the loop shuts down.
  let coroutines = CoScope()

  /// Where tasks go once the loop has shut down.
  static let afterShutdown = DispatchQueue(label: "CovenantNIO.after-event-loop-shutdown")

  /// Runs a task that can no longer go to the loop. `@unchecked`: a scheduler task is not
  /// `Sendable`, but it is made to run on another thread (that is what a scheduler is for).
  static func runAfterShutdown(_ task: @escaping () -> Void) {
    nonisolated(unsafe) let task = task
    afterShutdown.async { task() }
  }

  init(eventLoop: any EventLoop) {
    self.eventLoop = eventLoop
    runBatch = { [weak self] in self?.runBatchNow() }
    drainInboxTask = { [weak self] in self?.drainInbox() }
  }

  /// How many times this scheduler has called `eventLoop.execute` (a diagnostic counter: the
  /// measure of how many of its tasks were *not* hop-free).
  public var executeCalls: Int { executes.load(ordering: .relaxed) }

  /// Whether the loop has shut down (as observed by this scheduler).
  public var isShutDown: Bool { shutDownFlag.load(ordering: .acquiring) }

  /// Runs `task` on the loop: in the current turn when called inside one on the loop thread,
  /// otherwise through the inbox and one `execute` (see the type's documentation). Never runs
  /// `task` synchronously.
  public func scheduleTask(_ task: @escaping () -> Void) {
    if eventLoop.inEventLoop, inTurn {
      local.append(task)
      return
    }
    let mustExecute = inbox.withLockedValue { inbox -> Bool? in
      if inbox.isShutDown { return nil }
      inbox.tasks.append(task)
      if inbox.drainScheduled { return false }
      inbox.drainScheduled = true
      return true
    }
    switch mustExecute {
    case nil:
      Self.runAfterShutdown(task)
    case true?:
      executes.add(1, ordering: .relaxed)
      eventLoop.execute(drainInboxTask)
    case false?:
      break
    }
  }

  /// Runs `body` on the loop thread as part of a turn of this scheduler: the coroutines of this
  /// loop that `body` makes ready (by fulfilling a promise they await, sending on a channel they
  /// receive from, …) continue later in this same iteration of the loop, after the loop's
  /// current I/O events, in one loop task that every `withTurn` of the iteration shares.
  ///
  /// Use it in NIO callbacks that wake coroutines — a timer, a channel read:
  ///
  /// ```swift
  /// func channelRead(context: ChannelHandlerContext, data: NIOAny) {
  ///   scheduler.withTurn { inbox.offer(unwrapInboundIn(data)) }   // the reader resumes later
  /// }
  /// ```
  ///
  /// **Batching.** A burst of wake-ups resumes each coroutine once: 1,000 `channelRead`s of one
  /// read, each offering to a `CoChannel`, resume its receiver once, and it then takes the
  /// 1,000 values without suspending (`WithTurnBatchingTests`). The cost is at most one
  /// `execute` per loop iteration, whatever the number of `withTurn` calls in it; without
  /// `withTurn`, each wake-up from a NIO callback may cost one.
  ///
  /// Nested calls, and calls from a coroutine of this loop, run `body` in the enclosing turn.
  /// (`NIOCoroutineChannel`, `EventLoopFuture.await()` and the other bridges of this module do
  /// not need it: they wake their coroutines at the end of NIO's own callbacks.)
  /// - Precondition: called on the loop's thread.
  public func withTurn<T>(_ body: () throws -> T) rethrows -> T {
    eventLoop.preconditionInEventLoop()
    if inTurn { return try body() }
    inTurn = true
    defer { deferTurnEnd() }
    return try body()
  }

  /// Runs `body` as a turn of this scheduler that ends when `body` returns: what `body` makes
  /// ready runs right then, in this loop task. For the end of a NIO callback that has seen its
  /// whole burst (`channelReadComplete`, a timer, a future's completion): no `execute`.
  /// - Precondition: on the loop's thread.
  ///
  /// `body` runs as a task of this scheduler in Covenant's sense (`Coroutine.runAsTask`): the
  /// first coroutine it wakes continues right after it without being queued, so a wake-up
  /// allocates nothing.
  func runTurn(_ body: () -> Void) {
    if inTurn { return body() }
    inTurn = true
    Coroutine.runAsTask(of: self, body)
    finishTurn()
  }

  /// Registers `action` to run when the current turn ends, after every coroutine the turn runs:
  /// how `NIOCoroutineChannel` flushes the writes of a turn together. Outside a turn, runs it
  /// at once.
  /// - Precondition: on the loop's thread.
  func atTurnEnd(_ action: any TurnEndAction) {
    if !inTurn {
      action.turnDidEnd()
    } else if turnEndAction == nil {
      turnEndAction = action
    } else {
      moreTurnEndActions.append(action)
    }
  }

  private var hasTurnEndActions: Bool { turnEndAction != nil || !moreTurnEndActions.isEmpty }

  /// The end of a `withTurn`: what it made ready goes to the loop task shared by the
  /// iteration's `withTurn`s (one `execute`, made by the first of them).
  private func deferTurnEnd() {
    inTurn = false
    if hasTurnEndActions { runTurnEndActions() }
    if local.isEmpty { return }
    batch.append(contentsOf: local)
    local.removeAll(keepingCapacity: true)
    if isShutDown {  // the loop would drop the task
      for task in batch { Self.runAfterShutdown(task) }
      batch.removeAll()
      return
    }
    if batchScheduled { return }
    batchScheduled = true
    executes.add(1, ordering: .relaxed)
    eventLoop.execute(runBatch)
  }

  /// The loop task shared by an iteration's `withTurn`s: runs what they made ready.
  private func runBatchNow() {
    batchScheduled = false
    var tasks: [() -> Void] = []
    swap(&tasks, &batch)
    runInTurn(tasks)
    tasks.removeAll(keepingCapacity: true)
    if batch.isEmpty { batch = tasks }  // its storage, for the next batch
  }

  /// Runs the inbox's tasks in one turn (the task behind each `execute`).
  private func drainInbox() {
    let tasks = inbox.withLockedValue { inbox -> [() -> Void] in
      inbox.drainScheduled = false
      defer { inbox.tasks = [] }
      return inbox.tasks
    }
    runInTurn(tasks)
  }

  /// Runs `tasks` as one turn (or, inside a turn, queues them in it).
  private func runInTurn(_ tasks: [() -> Void]) {
    if inTurn {
      local.append(contentsOf: tasks)
      return
    }
    inTurn = true
    for task in tasks { task() }
    finishTurn()
  }

  /// Runs what the turn made ready, up to the budget, then the turn-end actions (flushes, which
  /// may make more ready: a writer waiting for its channel to drain), and again while budget
  /// remains; then closes the turn and sends any rest back through the inbox.
  private func finishTurn() {
    var ran = 0
    var index = 0
    while true {
      while index < local.count, ran < Self.turnBudget {
        let task = local[index]
        index += 1
        ran += 1
        task()
      }
      if !hasTurnEndActions { break }
      runTurnEndActions()
      if index == local.count || ran == Self.turnBudget { break }
    }
    let rest = Array(local[index...])
    local.removeAll(keepingCapacity: true)
    inTurn = false
    for task in rest { scheduleTask(task) }
  }

  /// Runs the registered turn-end actions, including any they register.
  private func runTurnEndActions() {
    var index = 0
    while true {
      if let action = turnEndAction.take() {
        action.turnDidEnd()
      } else if index < moreTurnEndActions.count {
        let action = moreTurnEndActions[index]
        index += 1
        action.turnDidEnd()
      } else {
        break
      }
    }
    if index > 0 { moreTurnEndActions.removeAll(keepingCapacity: true) }
  }

  /// Called once, on the loop thread, when the loop shuts down: stops sending work to the
  /// loop, cancels the tracked coroutines and lets them (and anything already queued) finish
  /// now, on this thread, inside a turn.
  func loopDidShutDown() {
    shutDownFlag.store(true, ordering: .releasing)
    let pending = inbox.withLockedValue { inbox -> [() -> Void] in
      inbox.isShutDown = true
      defer { inbox.tasks = [] }
      return inbox.tasks
    }
    if eventLoop.inEventLoop {
      runTurn {
        for task in pending { task() }
        coroutines.cancel()
      }
    } else {
      for task in pending { Self.runAfterShutdown(task) }
      coroutines.cancel()
    }
  }
}

/// Something that runs when a turn of an `EventLoopCoroutineScheduler` ends, on the loop's
/// thread (`atTurnEnd`): a channel flushing the writes its coroutines made in the turn.
protocol TurnEndAction: AnyObject {
  func turnDidEnd()
}

extension EventLoopCoroutineScheduler: CoroutineSchedulerDescribing {
  /// `event loop <the loop's description>`: how coroutine snapshots and dumps
  /// (`CoroutineSnapshot`) name coroutines running on this loop.
  public var coroutineSchedulerDescription: String { "event loop \(eventLoop)" }
}
