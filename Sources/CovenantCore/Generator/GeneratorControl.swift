import CCoroutineContext
import CCovenantShims

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
  /// What a coroutine snapshot reads of the generator: the first stored property, so at the
  /// start of the control block whatever the element type (`GeneratorRegistration.check`).
  @usableFromInline var registration = GeneratorRegistration()
  @usableFromInline var phase = GeneratorPhase.initial
  /// The element the last `yield` handed over, taken by `next()`.
  @usableFromInline var element: Element?
  /// The error the body threw, if it ended that way.
  @usableFromInline var failure: (any Error)?
  /// Whether `failure` has been thrown to a `nextElement()` caller already.
  @usableFromInline var failureDelivered = false
  /// The fiber the body runs on; created at the first `next()`, destroyed when the body ends.
  @inlinable var fiber: OpaquePointer? {
    get { registration.fiber }
    set { registration.fiber = newValue }
  }
  /// What the fiber runs: the body with its `yield`. Moved out by the fiber when it starts.
  @usableFromInline var start = GeneratorStart()

  @inlinable init() {}
}

/// A generator in the registry of live coroutines and generators (`CoroutineRegistry`): what a
/// snapshot reads through the registered pointer, which is the generator's control block. Not
/// generic, and its first stored property, so the snapshot finds it without the element type.
@usableFromInline
struct GeneratorRegistration {
  /// The fiber the body runs on, while it has one. Set before the generator registers and
  /// cleared after it leaves, so a snapshot (which reads it only while the generator is
  /// registered) sees it stable.
  @usableFromInline var fiber: OpaquePointer?
  /// Where the generator was made (`#fileID` form), and the line (0: unknown). Written before
  /// the generator registers, never after.
  @usableFromInline var startFile: StaticString = unknownStartFile
  @usableFromInline var startLine: UInt32 = 0
  /// The generator's registry entry while it is registered (its body has started and not
  /// ended); `nil` otherwise, or if the registry was full. Not read by snapshots (it is
  /// written after the generator registers).
  @usableFromInline var entry: UnsafeMutablePointer<cov_registry_entry_t>?
  @usableFromInline var slot: UInt32 = COV_REGISTRY_NO_SLOT
  /// The registry activity word of the body's next switch-out: suspended in a yield, stamped
  /// with a count of switch-outs (`cov_registry_entry_note_switched_out`), so that each one
  /// differs from the one before. Kept whole, so a switch-out is one store and one add.
  @usableFromInline var switchOutWord = cov_activity_word(
    UInt64(COV_ACTIVITY_SUSPENDED), UInt64(CoroutineWaitKind.generatorYield.rawValue), 1)
  /// What `switchOutWord` advances by (one in its stamp).
  @inlinable static var switchOutStep: UInt64 { 1 << 8 }

  @inlinable init() {}

  /// What a snapshot reads of the registration at `address`: only the fields written before
  /// the generator registered, each by itself (the generator goes on writing the others).
  static func snapshotFields(
    at address: UnsafeRawPointer
  ) -> (fiber: OpaquePointer?, startFile: StaticString, startLine: UInt32) {
    (
      address.load(
        fromByteOffset: MemoryLayout<Self>.offset(of: \.fiber)!, as: OpaquePointer?.self),
      address.load(
        fromByteOffset: MemoryLayout<Self>.offset(of: \.startFile)!, as: StaticString.self),
      address.load(
        fromByteOffset: MemoryLayout<Self>.offset(of: \.startLine)!, as: UInt32.self)
    )
  }

  /// Checks that `registration` starts the control block of `Element`'s generators.
  @inlinable static func check<Element>(_: GeneratorControl<Element>.Type) {
    assert(
      MemoryLayout<GeneratorControl<Element>>.offset(of: \.registration) == 0,
      "GeneratorRegistration must be the first stored property of GeneratorControl")
  }
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
  let coroutine = ThreadSlot.load(ThreadSlot.coroutine)
  if coroutine != nil { ThreadSlot.store(ThreadSlot.coroutine, nil) }
  cov_fiber_resume(fiber)
  if coroutine != nil { ThreadSlot.store(ThreadSlot.coroutine, coroutine) }
}
