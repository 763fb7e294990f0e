import Dispatch
import Foundation

/// Something that runs tasks: where a coroutine runs and continues after each `await`.
///
/// `DispatchQueue`, `OperationQueue` and `RunLoop` conform; any type with a way to run a
/// closure can, e.g. a Core Data context:
///
/// ```swift
/// extension NSManagedObjectContext: CoroutineScheduler {
///   func scheduleTask(_ task: @escaping () -> Void) { perform(task) }
/// }
/// ```
///
/// A scheduler must run every task it is given, exactly once, eventually. Tasks may be run on
/// any thread the scheduler owns; a concurrent scheduler may run a coroutine's consecutive
/// slices on different threads.
public protocol CoroutineScheduler {
  /// Runs `task` asynchronously (or synchronously, if the scheduler is that kind).
  func scheduleTask(_ task: @escaping () -> Void)
}

extension DispatchQueue: CoroutineScheduler {
  /// Runs `task` with `async`.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    async { task.value() }
  }
}

extension OperationQueue: CoroutineScheduler {
  /// Runs `task` as a block operation.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    addOperation { task.value() }
  }
}

extension RunLoop: CoroutineScheduler {
  /// Runs `task` on the run loop's thread, in any of the common modes, waking the run loop if
  /// it is waiting.
  ///
  /// A zero-interval timer rather than `perform(_:)`: on Linux, `perform` does not wake a run
  /// loop sleeping in `run()`, so the task would wait for some unrelated event.
  public func scheduleTask(_ task: @escaping () -> Void) {
    let task = UncheckedSendable(task)
    let timer = Timer(fire: Date(), interval: 0, repeats: false) { _ in task.value() }
    add(timer, forMode: .common)
  }
}

/// Runs tasks at once on the calling thread: where `CoFuture(task:)` coroutines start, and
/// where they continue after an `await` (on the thread that resumed them).
struct ImmediateScheduler: CoroutineScheduler {
  func scheduleTask(_ task: @escaping () -> Void) { task() }
}

extension CoroutineScheduler {
  /// Starts a coroutine that runs `task` on this scheduler.
  ///
  /// Inside `task`, `await` calls suspend the coroutine instead of blocking the thread; after
  /// each one the coroutine continues on this scheduler. An error thrown by `task` ends the
  /// coroutine (use `coroutineFuture` to observe it). With a `scope`, cancelling the scope
  /// cancels the coroutine.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let user = try api.fetchUser(id).await()      // suspends, the main thread keeps running
  ///   label.text = user.name
  /// }
  /// ```
  ///
  /// SwiftCoroutine's exact signature, so `startCoroutine(in:task:)` also works with the label
  /// and as a function value; `startCoroutine(in:stackSize:_:)` sets the stack size and
  /// `startCoroutine(in:stackMode:_:)` the stack mode. By default the coroutine runs on one of
  /// the scheduler's shared stacks (see ``CoroutineStackMode``).
  @preconcurrency
  public func startCoroutine(in scope: CoScope? = nil, task: @escaping @Sendable () throws -> Void) {
    startCoroutine(in: scope, stack: .automatic, task)
  }

  /// Starts a coroutine that runs `task` on this scheduler, on a dedicated stack of
  /// `stackSize` bytes; otherwise the same as `startCoroutine(in:task:)`.
  ///
  /// ```swift
  /// DispatchQueue.global().startCoroutine(stackSize: 1 << 20) { try parseDeeplyNested(input) }
  /// ```
  ///
  /// - Parameters:
  ///   - scope: cancelling this scope (or its deinit) cancels the coroutine.
  ///   - stackSize: bytes of stack for this coroutine, which then has a stack of its own
  ///     (``CoroutineStackMode/dedicated``); `nil` changes nothing (the scheduler's stack mode,
  ///     `Coroutine.defaultStackSize`). The stack is allocated when the coroutine first runs;
  ///     a coroutine that cannot get one (address space or mapping limit exhausted) does not
  ///     run, and the failure is reported on stderr.
  ///   - task: the coroutine's body; an error it throws ends the coroutine.
  @inlinable
  @preconcurrency
  public func startCoroutine(
    in scope: CoScope? = nil, stackSize: Int?, _ task: @escaping @Sendable () throws -> Void
  ) {
    startCoroutine(in: scope, stack: .size(stackSize), task)
  }

  /// The one start path: `stack` is what the caller asked for.
  @inlinable
  func startCoroutine(
    in scope: CoScope?, stack: CoroutineStackRequest, _ task: @escaping @Sendable () throws -> Void
  ) {
    let coroutine =
      Self.self == DispatchQueue.self
      ? CoroutineContext(queue: _identityCast(self, to: DispatchQueue.self), stack: stack, body: task)
      : CoroutineContext(scheduler: self, stack: stack, body: task)
    scope?.add(coroutine)
    coroutine.start()
  }

  /// Inside a coroutine: moves the coroutine to this scheduler, runs `task` there, and moves it
  /// back to where it was. Outside a coroutine it throws `calledOutsideCoroutine`.
  ///
  /// ```swift
  /// DispatchQueue.main.startCoroutine {
  ///   let image = try DispatchQueue.global().await { try decode(data) }  // off the main thread
  ///   imageView.image = image                                             // back on main
  /// }
  /// ```
  public func await<T>(_ task: () throws -> T) throws -> T {
    let coroutine = try CoroutineContext.requireCurrent()
    if coroutine.isOn(self) { return try task() }
    if coroutine.isCanceled { throw CoroutineError.canceled }
    let home = coroutine.scheduler
    coroutine.hop(to: self)
    defer { coroutine.hop(to: home) }
    return try task()
  }
}

func reportUnstartableCoroutine(_ error: any Error) {
  FileHandle.standardError.write(Data("\(error)\n".utf8))
}
