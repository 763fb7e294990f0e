/// Carries a value across a concurrency boundary the compiler cannot see through.
///
/// Used by the bridges where a value produced in one context is consumed in exactly one other,
/// with a happens-before edge between the two that the compiler cannot prove (a continuation
/// resumed from a promise observer, a result handed from a `Task` to a coroutine through the
/// wait-state atomics). It never shares a value between two live users, which is what makes
/// `@unchecked Sendable` sound here.
struct UncheckedTransfer<Value>: @unchecked Sendable {
  var value: Value
  init(_ value: Value) { self.value = value }
}
