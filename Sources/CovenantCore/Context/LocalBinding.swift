/// One binding of a `CoroutineLocal<Value>`: the node `withValue` puts in front of the bindings
/// in force (`LocalBindings`). Immutable, so that the coroutines started while it is in force
/// share it.
final class LocalBinding<Value: Sendable>: LocalBindings, @unchecked Sendable {
  // `@unchecked Sendable`: immutable; `Value` is `Sendable`.

  let value: Value
  /// The task-local the value is kept in, for a bridged local.
  let bridge: TaskLocalBridge<Value>?

  init(key: ObjectIdentifier, value: Value, next: LocalBindings?, bridge: TaskLocalBridge<Value>?) {
    self.value = value
    self.bridge = bridge
    super.init(key: key, next: next, bridged: bridge != nil)
  }

  override func bindTaskLocal(around body: () -> Int32) -> Int32 {
    guard let bridge else { return body() }
    return bridge.taskLocal.withValue(value, operation: body)
  }
}
