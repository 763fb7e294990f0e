import CCoroutineContext

extension CoroutineScheduler {
  /// Starts a coroutine that runs `task` on this scheduler with the stack mode `stackMode`
  /// (a dedicated stack has `Coroutine.defaultStackSize` bytes); otherwise the same as
  /// `startCoroutine(in:file:line:task:)`.
  ///
  /// ```swift
  /// // It hands pointers into its frames to C code that calls back later: no sharing.
  /// queue.startCoroutine(stackMode: .dedicated) { try runLegacyProtocol(connection) }
  /// ```
  @inlinable
  public func startCoroutine(
    in scope: CoScope? = nil, name: String? = nil, stackMode: CoroutineStackMode,
    file: StaticString = #fileID, line: UInt = #line,
    _ task: @escaping @Sendable () throws -> Void
  ) {
    startCoroutine(in: scope, name: name, stack: .mode(stackMode), file: file, line: line, task)
  }
}

extension CoroutineScheduler where Self: AnyObject {
  /// The stack mode of coroutines started on this scheduler without a `stackMode:` or
  /// `stackSize:` of their own; `nil` (the initial value) follows `Coroutine.defaultStackMode`.
  ///
  /// ```swift
  /// let blocking = DispatchQueue(label: "legacy-io", attributes: .concurrent)
  /// blocking.coroutineStackMode = .dedicated   // its coroutines block threads: don't share
  /// ```
  ///
  /// The setting belongs to this object (it ends with it) and applies to coroutines that start
  /// after it is made. Only class schedulers have one: coroutines of value-type schedulers
  /// follow `Coroutine.defaultStackMode`.
  public var coroutineStackMode: CoroutineStackMode? {
    get { SchedulerStackSettings.settings(for: self)?.mode }
    nonmutating set { SchedulerStackSettings.update(self) { $0.mode = newValue } }
  }

  /// How many shared stacks this scheduler's coroutines use at least (1 to 64; initially
  /// `Coroutine.sharedStacksPerScheduler`). Raise it for a serial scheduler whose coroutines
  /// take turns in larger groups (a pipeline of more than four stages), so that each turn
  /// finds its frames in place instead of copying them in.
  ///
  /// ```swift
  /// pipelineQueue.coroutineSharedStackCount = 8
  /// ```
  ///
  /// Like `coroutineStackMode`, it belongs to this object and applies to coroutines that start
  /// after it is set.
  public var coroutineSharedStackCount: Int {
    get {
      SchedulerStackSettings.settings(for: self)?.sharedStackCount
        ?? Coroutine.sharedStacksPerScheduler
    }
    nonmutating set {
      SchedulerStackSettings.update(self) { $0.sharedStackCount = min(64, max(1, newValue)) }
    }
  }
}

/// The per-scheduler stack settings, keyed by object identity and checked against a weak
/// reference, so that a setting never outlives its scheduler (a new object at the same
/// address starts without one). Consulted when a coroutine first runs, and only for a scheduler
/// whose group of shared stacks is marked as configured (`cov_stack_group_is_configured`): the
/// coroutines of other schedulers pay one flag test.
enum SchedulerStackSettings {
  struct Settings {
    var mode: CoroutineStackMode?
    var sharedStackCount: Int?
  }

  /// Only touched under `entries`' lock.
  private struct Entry: @unchecked Sendable {
    weak var scheduler: AnyObject?
    var settings: Settings
  }

  private static let entries = InlineMutex<[ObjectIdentifier: Entry]>([:])

  static func settings(for scheduler: AnyObject) -> Settings? {
    settings(for: ObjectIdentifier(scheduler))
  }

  /// The settings of the scheduler with this identity, if it is still alive.
  static func settings(for identity: ObjectIdentifier?) -> Settings? {
    guard let identity, let group = cov_stack_group(groupKey(identity)),
      cov_stack_group_is_configured(group) != 0
    else { return nil }
    return entries.withCriticalSection { entries in
      guard let entry = entries[identity] else {
        cov_stack_group_set_configured(group, 0)  // a group that moved to it
        return nil
      }
      if entry.scheduler.map(ObjectIdentifier.init) == identity { return entry.settings }
      entries[identity] = nil  // its scheduler is gone; a new object has its address
      cov_stack_group_set_configured(group, 0)
      return nil
    }
  }

  static func update(_ scheduler: AnyObject, _ change: (inout Settings) -> Void) {
    let identity = ObjectIdentifier(scheduler)
    entries.withCriticalSection { entries in
      entries = entries.filter { $0.value.scheduler != nil }
      var entry = entries[identity] ?? Entry(scheduler: scheduler, settings: Settings())
      change(&entry.settings)
      entries[identity] = entry
    }
    if let group = cov_stack_group(groupKey(identity)) { cov_stack_group_set_configured(group, 1) }
  }

  /// The key of the scheduler's group of shared stacks: its address.
  static func groupKey(_ identity: ObjectIdentifier) -> UnsafeRawPointer? {
    UnsafeRawPointer(bitPattern: Int(bitPattern: identity))
  }
}
