/// A value bound for the duration of an operation that follows the coroutine it was bound in:
/// across its `await`s, delays, scheduler hops and shared-stack evictions, and into the
/// coroutines it starts; Covenant's `@TaskLocal`.
///
/// Declare it once, as a `static let`, and bind it with `withValue(_:operation:)`:
///
/// ```swift
/// enum Request {
///   static let id = CoroutineLocal<String?>(default: nil)
/// }
///
/// DispatchQueue.global().startCoroutine {
///   Request.id.withValue("r-42") {
///     Coroutine.start {
///       print(Request.id.value ?? "none")  // r-42: a coroutine started here inherits it
///     }
///   }
/// }
/// ```
///
/// - **Reading.** `value` is the innermost binding in force in the running coroutine; outside
///   any coroutine, the thread's (a `withValue` on that thread); else the default.
/// - **Inheritance.** A coroutine started inside a coroutine (`startCoroutine`,
///   `coroutineFuture`, `CoFuture(task:)`, `Coroutine.start`, in a scope, an actor) starts with
///   the bindings in force at its start, shared rather than copied (starting a coroutine costs
///   the same whatever is bound). A coroutine started outside any coroutine inherits the
///   thread's bindings, and the values of bridged task-locals there (see below). A lazy
///   ``Generator`` body sees the bindings in force where the generator was made.
/// - **Isolation.** Each coroutine has its own bindings: another coroutine that runs on the
///   same thread afterwards, or on the same shared stack, never sees them, and a binding made
///   inside a coroutine ends with its `withValue`, whichever thread that is on.
///
/// **Bridged to a task-local.** `CoroutineLocal(bridging: SomeType.$taskLocal)` keeps the value
/// in the `TaskLocal` itself: while a coroutine runs, the task-local has the coroutine's
/// binding, so code that reads the task-local directly sees it too, and so do the `Task`s the
/// coroutine makes (`Coroutine.awaitAsync`, `CoFuture(operation:)`, `Promise(operation:)`); a
/// coroutine started from a task inherits the task's value. Inside a coroutine, bind a bridged
/// value with this type's `withValue`, which follows the coroutine across suspensions:
/// `TaskLocal.withValue` itself (and APIs built on it) must not suspend a coroutine in its
/// operation, since its binding belongs to the thread (see the CoroutineLocals article).
///
/// Costs: a read walks the bindings in force (innermost first); `withValue` allocates one node
/// (and, for a bridged local in a coroutine, switches out and back in to bind the task-local on
/// its thread). Coroutines that bind nothing pay nothing measurable (Benchmarks C1, C2, M2).
public final class CoroutineLocal<Value: Sendable>: Sendable {
  /// The value read where nothing is bound (for a bridged local, the task-local's).
  let defaultValue: Value
  /// The task-local this local is kept in, if it was declared `bridging:` one.
  let bridge: TaskLocalBridge<Value>?

  /// A coroutine-local whose value is `defaultValue` wherever nothing is bound.
  ///
  /// ```swift
  /// static let requestID = CoroutineLocal<String?>(default: nil)
  /// ```
  public init(default defaultValue: Value) {
    self.defaultValue = defaultValue
    bridge = nil
  }

  /// A coroutine-local kept in `taskLocal`: the two are one value, visible both ways across
  /// `Coroutine.awaitAsync`, the tasks a coroutine makes, and the coroutines a task starts.
  ///
  /// ```swift
  /// enum Trace {
  ///   @TaskLocal static var span: String?
  ///   static let coroutineSpan = CoroutineLocal(bridging: $span)
  /// }
  /// ```
  ///
  /// Declare it once (a `static let`): each bridge is registered for the life of the process,
  /// and every coroutine started outside a coroutine reads its task-local.
  public init(bridging taskLocal: TaskLocal<Value>) {
    let bridge = TaskLocalBridge(taskLocal)
    defaultValue = bridge.defaultValue ?? taskLocal.get()
    self.bridge = bridge
    bridge.key = ObjectIdentifier(self)
    TaskLocalBridges.register(bridge)
  }

  /// The value bound in the running coroutine (or, outside any coroutine, on this thread), or
  /// the default.
  public var value: Value {
    // A bridged value is in the task-local: bound around the running coroutine's slices, in a
    // task, or on the thread.
    if let bridge { return bridge.taskLocal.get() }
    let bindings: LocalBindings?
    if let coroutine = CoroutineContext.currentUnmanaged {
      bindings = coroutine._withUnsafeGuaranteedRef { $0.localBindings }
    } else {
      bindings = LocalBindings.threadBindings
    }
    guard let node = bindings?.find(ObjectIdentifier(self)) else { return defaultValue }
    return unsafeDowncast(node, to: LocalBinding<Value>.self).value
  }

  /// Binds `value` for the duration of `operation` and returns what it returns; the previous
  /// binding is back when it returns or throws.
  ///
  /// ```swift
  /// let user = try Request.id.withValue(request.id) {
  ///   try api.fetchUser(request.userID).await()    // Request.id.value is request.id here,
  /// }                                              // on whichever thread the coroutine resumes
  /// ```
  ///
  /// Inside a coroutine the binding is the coroutine's: `operation` may suspend, hop to
  /// another scheduler or start coroutines (which inherit it). Outside any coroutine it is the
  /// thread's (a bridged local's is the task-local's, bound with `TaskLocal.withValue`).
  @discardableResult
  public func withValue<Result>(
    _ value: Value, operation: () throws -> Result
  ) rethrows -> Result {
    guard let coroutine = CoroutineContext.current else {
      if let bridge { return try bridge.taskLocal.withValue(value, operation: operation) }
      return try withThreadValue(value, operation: operation)
    }
    let previous = coroutine.localBindings
    let node = LocalBinding(
      key: ObjectIdentifier(self), value: value, next: previous, bridge: bridge)
    coroutine.localBindings = node
    if bridge != nil { coroutine.switchOutToRebindTaskLocals() }
    defer {
      coroutine.localBindings = previous
      if bridge != nil { coroutine.switchOutToRebindTaskLocals() }
    }
    return try operation()
  }

  /// `withValue` outside any coroutine: the thread's slot holds the node (unretained) while
  /// `operation` runs; this frame keeps it.
  private func withThreadValue<Result>(
    _ value: Value, operation: () throws -> Result
  ) rethrows -> Result {
    let previous = ThreadSlot.load(ThreadSlot.locals)
    let node = LocalBinding(
      key: ObjectIdentifier(self), value: value, next: LocalBindings.threadBindings, bridge: nil)
    ThreadSlot.store(ThreadSlot.locals, Unmanaged.passUnretained(node).toOpaque())
    defer { ThreadSlot.store(ThreadSlot.locals, previous) }
    return try withExtendedLifetime(node) { try operation() }
  }
}

extension CoroutineLocal: CustomStringConvertible {
  /// The type of the value and the value read here, e.g.
  /// `CoroutineLocal<Optional<String>>(Optional("r-42"))`.
  public var description: String { "CoroutineLocal<\(Value.self)>(\(value))" }
}
