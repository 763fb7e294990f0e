import CCoroutineContext
import CCovenantShims

extension Coroutine {
  /// The stack mode of coroutines whose start and scheduler do not choose one (initially
  /// `.shared`). Generators always have a dedicated stack.
  ///
  /// ```swift
  /// Coroutine.defaultStackMode = .dedicated   // every coroutine on a stack of its own
  /// ```
  public static var defaultStackMode: CoroutineStackMode {
    get { defaultStackModeIsDedicated.load(ordering: .relaxed) ? .dedicated : .shared }
    set { defaultStackModeIsDedicated.store(newValue == .dedicated, ordering: .relaxed) }
  }

  /// How many shared stacks a scheduler's coroutines use at least (initially 4; 1 to 64): a
  /// coroutine that starts while every one of them holds a suspended coroutine gets a new
  /// stack, up to this many, rather than taking one over. Beyond it, a scheduler gains stacks
  /// only while all of its stacks are running at once (up to twice the processor count), so a
  /// concurrent queue keeps its parallelism. Applies to schedulers whose coroutines have not
  /// run yet; `coroutineSharedStackCount` sets it for one scheduler.
  public static var sharedStacksPerScheduler: Int {
    get { Int(cov_shared_stacks_default_min()) }
    set { cov_shared_stacks_set_default_min(max(1, newValue)) }
  }

  /// The most bytes of stack a coroutine on a shared stack may have in use when it suspends
  /// (initially 65,536; at least 4,096), which bounds its copy buffer. A coroutine suspending
  /// with more stops the process with a message naming both figures, at that suspension (not
  /// only when a copy happens to be needed). Give such coroutines `stackMode: .dedicated`.
  public static var sharedStackCopyLimit: Int {
    get { Int(cov_shared_stack_copy_limit()) }
    set { cov_shared_stack_set_copy_limit(max(0, newValue)) }
  }
}

/// `Coroutine.defaultStackMode`'s storage, read by every coroutine start that chooses no stack:
/// a word of static storage (`GlobalAtomic`), so the read costs no lazy initialisation check.
private var defaultStackModeIsDedicated: GlobalAtomic<Bool> {
  GlobalAtomic(COV_GLOBAL_ATOMIC_DEFAULT_STACK_MODE)
}
