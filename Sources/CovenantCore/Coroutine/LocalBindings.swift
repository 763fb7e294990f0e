import CCoroutineContext
import CCovenantShims

/// The coroutine-local bindings in force somewhere: an immutable list, innermost binding first,
/// whose nodes are never changed once made. `CoroutineLocal.withValue` (Context/) puts a new
/// node in front for the duration of its operation; a coroutine started meanwhile shares the
/// list as it is (one retain: starting a coroutine copies nothing, whatever was bound).
///
/// Where the list of the running code is kept:
/// - in a coroutine, in its object (`CoroutineContext.localBindings`): it moves with the
///   coroutine across awaits, hops and shared-stack evictions, and another coroutine on the
///   same thread has its own;
/// - outside any coroutine, in the thread's slot (`ThreadSlot.locals`, unretained: the
///   `withValue` frame that installed a node keeps it).
///
/// The subclasses (Context/) hold the value and, for a local bridged to a `TaskLocal`, bind
/// the task-local around a coroutine's slices (`withTaskLocalsBound`).
@usableFromInline
class LocalBindings: @unchecked Sendable {
  // `@unchecked Sendable`: immutable after init; subclasses hold `Sendable` values.

  /// The `CoroutineLocal` this node binds (its object identity).
  let key: ObjectIdentifier
  /// The bindings this node shadows.
  let next: LocalBindings?
  /// Whether this node or one after it binds a local bridged to a `TaskLocal`: a coroutine
  /// whose list says so binds those task-locals around each of its slices.
  let bindsTaskLocals: Bool

  init(key: ObjectIdentifier, next: LocalBindings?, bridged: Bool) {
    self.key = key
    self.next = next
    bindsTaskLocals = bridged || next?.bindsTaskLocals == true
  }

  /// The innermost node for `key`, if any.
  @inline(__always)
  final func find(_ key: ObjectIdentifier) -> LocalBindings? {
    var node: LocalBindings? = self
    while let current = node {
      if current.key == key { return current }
      node = current.next
    }
    return nil
  }

  /// Runs `body` with this node's task-local bound (a bridged node's override); plain nodes
  /// bind nothing.
  func bindTaskLocal(around body: () -> Int32) -> Int32 { body() }

  /// Runs `body` (a coroutine's slice) with every bridged binding of the list bound as its
  /// `TaskLocal`, outermost first, so that the innermost wins: code in the slice that reads the
  /// task-local directly (`ServiceContext.current`) sees the coroutine's binding, and a `Task`
  /// made in the slice inherits it.
  final func withTaskLocalsBound(_ body: () -> Int32) -> Int32 {
    guard bindsTaskLocals else { return body() }
    guard let next else { return bindTaskLocal(around: body) }
    return next.withTaskLocalsBound { bindTaskLocal(around: body) }
  }

  // MARK: Where the running code's list is

  /// The bindings a coroutine started now inherits, retained: the running coroutine's, else
  /// the thread's together with the bridged task-locals bound where it is started (a task's
  /// bindings flow into the coroutines it starts).
  @inline(__always)
  static func inheritedHere() -> LocalBindings? {
    if let coroutine = ThreadSlot.load(ThreadSlot.coroutine) {
      return Unmanaged<CoroutineContext>.fromOpaque(coroutine)._withUnsafeGuaranteedRef {
        $0.localBindings
      }
    }
    let thread = threadBindings
    return TaskLocalBridges.isEmpty ? thread : TaskLocalBridges.capture(onto: thread)
  }

  /// The list of the code running on this thread outside any coroutine.
  static var threadBindings: LocalBindings? {
    ThreadSlot.load(ThreadSlot.locals).map {
      Unmanaged<LocalBindings>.fromOpaque($0).takeUnretainedValue()
    }
  }
}

/// The `TaskLocal`s bridged to coroutine-locals (`CoroutineLocal(bridging:)`, Context/): a
/// coroutine started outside any coroutine inherits the values they have there (in a task, the
/// task's). Registered once per bridge, never removed (bridges are declared as `static let`s).
enum TaskLocalBridges {
  /// What reads a bridged task-local where a coroutine is started.
  protocol Capturing: AnyObject, Sendable {
    /// `bindings` with a node in front for the task-local's value here, if it is bound (a
    /// value other than its default); else `bindings`.
    func capture(onto bindings: LocalBindings?) -> LocalBindings?
  }

  /// How many bridges are registered (static storage: no lazy initialization on the start
  /// path).
  private static var count: GlobalAtomic<UInt64> {
    GlobalAtomic(COV_GLOBAL_ATOMIC_TASK_LOCAL_BRIDGES)
  }
  private static let registered = InlineMutex<[any Capturing]>([])

  /// Whether no bridge exists (the common case: one relaxed load on every start from outside
  /// a coroutine).
  static var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }

  static func register(_ bridge: any Capturing) {
    registered.withCriticalSection { $0.append(bridge) }
    count.wrappingAdd(1, ordering: .releasing)
  }

  /// `bindings` with the bound bridged task-locals in front.
  @inline(never)
  static func capture(onto bindings: LocalBindings?) -> LocalBindings? {
    let bridges = registered.withCriticalSection { $0 }
    var result = bindings
    for bridge in bridges { result = bridge.capture(onto: result) }
    return result
  }
}

extension CoroutineContext {
  /// Switches out to the runner, which resumes the coroutine at once with the task-locals of
  /// its bindings bound anew (after a `withValue` of a bridged local changed them).
  func switchOutToRebindTaskLocals() {
    assert(isRunningHere, "only the coroutine itself switches out")
    exit = .rebindTaskLocals
    cov_fiber_suspend()
  }
}
