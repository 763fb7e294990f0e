/// The `TaskLocal` a bridged `CoroutineLocal` keeps its value in, and what a coroutine started
/// outside any coroutine inherits of it (`TaskLocalBridges`).
final class TaskLocalBridge<Value: Sendable>: TaskLocalBridges.Capturing, @unchecked Sendable {
  // `@unchecked Sendable`: `key` is set once, by the `CoroutineLocal` that owns the bridge,
  // before the bridge is registered (published under the registry's lock); then immutable.

  let taskLocal: TaskLocal<Value>
  /// The task-local's default value, when reflection can read it (`TaskLocal` keeps it in a
  /// stored property it does not make public): a coroutine started where the task-local has
  /// that value inherits no binding of it, so it costs nothing. Without it, every coroutine
  /// started outside a coroutine gets a node for the value read there.
  let defaultValue: Value?
  /// The identity of the `CoroutineLocal` the bindings are made for.
  var key = ObjectIdentifier(TaskLocalBridge.self)

  init(_ taskLocal: TaskLocal<Value>) {
    self.taskLocal = taskLocal
    defaultValue = Mirror(reflecting: taskLocal).descendant("defaultValue") as? Value
  }

  func capture(onto bindings: LocalBindings?) -> LocalBindings? {
    let value = taskLocal.get()
    if let defaultValue, Self.sameBits(value, defaultValue) { return bindings }
    return LocalBinding(key: key, value: value, next: bindings, bridge: self)
  }

  /// Whether two values have the same bits, references included: then they are the same
  /// value (the converse need not hold, which only costs a binding).
  static func sameBits(_ first: Value, _ second: Value) -> Bool {
    withUnsafeBytes(of: first) { first in
      withUnsafeBytes(of: second) { second in first.elementsEqual(second) }
    }
  }
}
