/// Carries a value across a `@Sendable` boundary whose thread-safety the caller guarantees: the
/// one name for that promise in the whole package.
///
/// Promise values and blocks cross threads by design (they are dispatched to the queue the
/// caller chose); the bridges to Swift concurrency hand a value produced in one context to
/// exactly one other, with a happens-before edge the compiler cannot prove (a continuation
/// resumed from a promise observer, a result handed from a `Task` to a coroutine through the
/// wait-state atomics). It never shares a value between two live users, which is what makes
/// `@unchecked Sendable` sound. `package`: the scheduler conformances of `CovenantFoundation`
/// use it too.
@usableFromInline
package struct UncheckedSendable<T>: @unchecked Sendable {
  @usableFromInline package let value: T
  @inlinable package init(_ value: T) { self.value = value }
}
