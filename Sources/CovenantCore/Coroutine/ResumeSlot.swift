/// Where a claimed resumption leaves its value for the coroutine. Written once by the winning
/// claimer before `wake()`, read by the coroutine after it continues; the wait-state atomics
/// order the two.
// `@unchecked Sendable`: see above (the claim and the wake-up order the write and the read).
final class ResumeSlot<T>: @unchecked Sendable {
  var value: T?
}
