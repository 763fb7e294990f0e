import CCoroutineContext

/// Where a generator's body is, as seen from both of its stacks.
@usableFromInline
enum GeneratorPhase: UInt8 {
  /// Created; the body has not started (no stack allocated yet).
  case initial
  /// The body is running on its own stack (inside `next()`).
  case running
  /// The body is parked in `yield`, its element handed over.
  case suspended
  /// The generator is being dropped: the pending `yield` must throw `GeneratorDropped`.
  case dropping
  /// The body returned or threw; the stack is released.
  case finished
}

/// The state a generator's consumer side (`next()`) and body side (`yield`) share.
///
/// It lives in manually allocated memory reached through an `UnsafeMutablePointer` from both
/// sides: no class-property exclusivity checks and no reference counting on the per-element
/// path. Only one side runs at a time (the switch between them is synchronous), so no atomics
/// are needed either.
@usableFromInline
struct GeneratorControl<Element> {
  @usableFromInline var phase = GeneratorPhase.initial
  /// The element the last `yield` handed over, taken by `next()`.
  @usableFromInline var element: Element?
  /// The error the body threw, if it ended that way.
  @usableFromInline var failure: (any Error)?
  /// Whether `failure` has been thrown to a `nextElement()` caller already.
  @usableFromInline var failureDelivered = false
  /// The fiber the body runs on; created at the first `next()`, destroyed when the body ends.
  @usableFromInline var fiber: OpaquePointer?
  /// What the fiber runs: the body with its `yield`. Moved out by the fiber when it starts.
  @usableFromInline var start = GeneratorStart()

  @inlinable init() {}
}

/// A generator's body packaged for its fiber: a non-generic, non-function-typed field, so the
/// fiber entry can reach it through a plain pointer whatever the element type.
@usableFromInline
struct GeneratorStart {
  @usableFromInline var run: (() -> Void)?

  @inlinable init() {}
}

/// Thrown by a pending `yield` when its generator is dropped before the body finished, so the
/// body unwinds (ARC releases, `defer` blocks run) before its stack is freed.
struct GeneratorDropped: Error, CustomStringConvertible {
  var description: String {
    "Covenant.Generator was dropped before its body finished (rethrow this error from `yield`)"
  }
}

/// The C entry point of every generator fiber. `argument` points at the `start` field of the
/// generator's `GeneratorControl` (non-generic, so one entry point serves every element type).
@usableFromInline
func generatorFiberEntry(_ argument: UnsafeMutableRawPointer?) {
  let slot = argument!.assumingMemoryBound(to: GeneratorStart.self)
  let run = slot.pointee.run.take()!
  run()
}

/// Runs `fiber` (a generator body) until it yields or ends, with the scheduled-coroutine
/// thread slot cleared meanwhile: a generator body is not a coroutine, so `await` in it throws
/// `calledOutsideCoroutine` instead of suspending the consumer's coroutine from the wrong stack.
///
/// Inlined into `next()`: every call level between the consumer's loop and the switch costs a
/// mispredicted return after each switch (the CPU's return-stack buffer belongs to the other
/// stack then), so the path stays as flat as the fiber API allows.
@inlinable @inline(__always)
func resumeGeneratorFiber(_ fiber: OpaquePointer) {
  // The resume returns on the thread it was called on, so the inline slot access is valid.
  let coroutine = cov_tls_load(ThreadSlot.coroutine)
  if coroutine != nil { cov_tls_store(ThreadSlot.coroutine, nil) }
  cov_fiber_resume(fiber)
  if coroutine != nil { cov_tls_store(ThreadSlot.coroutine, coroutine) }
}
