import CCoroutineContext

/// A lazy sequence produced by a body that hands out elements with `yield`, like a Python
/// generator (coobjc's `co_sequence`).
///
/// ```swift
/// let naturals = Generator<Int> { yield in
///   var i = 0
///   while true { try yield(i); i += 1 }
/// }
/// print(Array(naturals.prefix(3)))   // [0, 1, 2]
/// ```
///
/// The body runs on a stack of its own, lazily: nothing runs until the first `next()`, and each
/// `next()` runs the body up to its following `yield` (or its end), then switches straight back
/// to the caller. No scheduler, queue or coroutine is involved — a generator works on any
/// thread, inside or outside a coroutine — and no allocation or lock happens per element:
/// an element costs one switch into the body and one back.
///
/// `yield` is a `Generator.Yield` value called like a function, `try yield(element)`; a body
/// that passes it on as a function value (`try values.forEach(yield)`) gets a plain function
/// through the second initializer, chosen automatically.
///
/// **End and errors.** The sequence ends when the body returns. If the body throws, the
/// sequence ends too: `next()` returns `nil`, `error` holds the error, and `nextElement()`
/// throws it (once; later calls return `nil`, as after a normal end).
///
/// **Dropping early.** Releasing an unfinished generator does *not* run the rest of the body:
/// its pending `try yield(…)` throws an internal error, so the body unwinds — its `defer`
/// blocks **do run**, and everything its frames hold is released — and then the stack is
/// freed. A body must let that error propagate: one that catches it and calls `yield` again is
/// stopped with a precondition failure. (A body that has not started when the generator is
/// dropped never runs at all.)
///
/// **Coroutine-locals.** The body sees the ``CoroutineLocal`` bindings in force where the
/// generator was made, and its own `withValue` bindings stay its own across `yield`s.
///
/// **Inside the body** there is no coroutine: `Coroutine.isInsideCoroutine` is `false` and
/// `await`s throw `CoroutineError.calledOutsideCoroutine`, even when the generator is consumed
/// from a coroutine. Calling `next()` of a generator from inside its own body, or its `yield`
/// outside the body, is a precondition failure.
///
/// A generator is single-pass (it is its own iterator) and not `Sendable`: use it from one
/// thread at a time. It may move between threads between calls.
///
/// It is deliberately not an `AsyncSequence`: the body is synchronous code that runs on the
/// consumer's thread, so `for x in generator` is already the natural loop in `async` code too.
public final class Generator<Element>: Sequence, IteratorProtocol {
  /// What a generator body calls to hand out an element: `try yield(element)`. It returns
  /// when the consumer asks for the next element, and throws when the generator is dropped
  /// first.
  ///
  /// A value with `callAsFunction` rather than a closure, so that the call compiles into the
  /// body itself: after each switch back into the body there is no return to mispredict, which
  /// is most of the cost of an element. Where a function value is needed, pass
  /// `yield.callAsFunction` (or use the initializer whose body receives a plain function).
  public struct Yield {
    @usableFromInline let control: UnsafeMutablePointer<GeneratorControl<Element>>

    @inlinable init(_ control: UnsafeMutablePointer<GeneratorControl<Element>>) {
      self.control = control
    }

    /// Hands `element` to the consumer and waits until it asks for the next one.
    ///
    /// - Throws: an internal error when the generator is dropped before asking again: let it
    ///   propagate, so the body unwinds.
    @inlinable @inline(__always)
    public func callAsFunction(_ element: Element) throws {
      try generatorYield(element, control)
    }
  }

  @usableFromInline let control: UnsafeMutablePointer<GeneratorControl<Element>>
  @usableFromInline let stackSize: Int

  /// Creates a generator whose elements are the values `body` passes to `yield`.
  ///
  /// ```swift
  /// let lines = Generator<String> { yield in
  ///   for line in text.split(separator: "\n") where !line.isEmpty { try yield(String(line)) }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - stackSize: bytes of stack for the body; `nil` uses `Coroutine.defaultStackSize`.
  ///   - file, line: where the generator is made, for coroutine snapshots (filled in by the
  ///     compiler).
  ///   - body: the producer. It runs only while the consumer is in `next()`, on the
  ///     consumer's thread, so it need not be `Sendable`.
  @inlinable
  public init(
    stackSize: Int? = nil, file: StaticString = #fileID, line: UInt = #line,
    _ body: @escaping (_ yield: Yield) throws -> Void
  ) {
    self.stackSize = Swift.max(0, stackSize ?? 0)
    control = .allocate(capacity: 1)
    control.initialize(to: GeneratorControl())
    control.pointee.registration.startFile = file
    control.pointee.registration.startLine = UInt32(truncatingIfNeeded: line)
    let control = self.control
    control.pointee.start.run = {
      // Runs on the generator's own stack. `control` outlives the body: the generator only
      // frees it after the body has ended.
      do {
        try body(Yield(control))
      } catch {
        // After a drop there is nobody to report to.
        if control.pointee.phase != .dropping { control.pointee.failure = error }
      }
      control.pointee.phase = .finished
    }
  }

  /// Creates a generator whose body receives `yield` as a plain function value, for bodies
  /// that pass it along: `Generator<Int> { yield in try values.forEach(yield) }`.
  ///
  /// Equivalent to the main initializer (which bodies that only call `yield(…)` select), at the
  /// cost of a closure call per element.
  @_disfavoredOverload
  @inlinable
  public convenience init(
    stackSize: Int? = nil, file: StaticString = #fileID, line: UInt = #line,
    _ body: @escaping (_ yield: (Element) throws -> Void) throws -> Void
  ) {
    self.init(stackSize: stackSize, file: file, line: line) { (yield: Yield) in
      try body(yield.callAsFunction)
    }
  }

  deinit {
    if control.pointee.phase == .suspended, let fiber = control.pointee.fiber {
      // Unwind the body: its pending `yield` throws, `defer`s run, its frames release.
      control.pointee.phase = .dropping
      resumeGeneratorFiber(fiber, &control.pointee.locals)
    }
    if let fiber = control.pointee.fiber {
      generatorLeaveRegistry(&control.pointee.registration)
      cov_fiber_destroy(fiber)
    }
    control.deinitialize(count: 1)
    control.deallocate()
  }

  /// Runs the body up to its next `yield` and returns the element it yielded, or `nil` when
  /// the body has ended (returned or thrown; see `error`).
  ///
  /// ```swift
  /// let g = Generator<Int> { yield in try yield(1); try yield(2) }
  /// g.next()   // 1
  /// g.next()   // 2
  /// g.next()   // nil
  /// ```
  @inlinable
  public func next() -> Element? {
    advance()
  }

  /// Like `next()`, but throws the error the body ended with (once; afterwards it returns `nil`).
  ///
  /// ```swift
  /// let g = Generator<Int> { yield in try yield(1); throw ParseError() }
  /// try g.nextElement()   // 1
  /// try g.nextElement()   // throws ParseError
  /// try g.nextElement()   // nil
  /// ```
  @inlinable
  public func nextElement() throws -> Element? {
    if let element = advance() { return element }
    if let failure = control.pointee.failure, !control.pointee.failureDelivered {
      control.pointee.failureDelivered = true
      throw failure
    }
    return nil
  }

  /// The error the body threw, once it has ended that way; `nil` otherwise.
  public var error: (any Error)? { control.pointee.failure }

  /// Whether the body has ended (returned or thrown); `next()` returns `nil` from then on.
  public var isFinished: Bool { control.pointee.phase == .finished }

  /// The shared step of `next()` and `nextElement()`.
  ///
  /// Misuse stops the process with `fatalError` rather than `preconditionFailure`, whose
  /// message optimized builds do not print.
  @inlinable
  func advance() -> Element? {
    let control = self.control
    switch control.pointee.phase {
    case .suspended:
      break
    case .initial:
      start()
    case .finished:
      return nil
    case .running, .dropping:
      fatalError(
        "Covenant.Generator.next() called from inside the generator's own body (re-entrant next)")
    }
    control.pointee.phase = .running
    let entry = control.pointee.registration.entry
    if let entry { cov_registry_entry_note_running(entry) }
    resumeGeneratorFiber(control.pointee.fiber.unsafelyUnwrapped, &control.pointee.locals)
    if control.pointee.phase == .suspended {
      // Stamped with a count of switch-outs, not a time (a generator waits for its consumer, on
      // the consumer's own thread; a clock read would cost a good part of an element): each
      // switch-out's word differs from the one before, so a snapshot that reads the word before
      // and after the frames sees a resume in between.
      if let entry {
        let word = control.pointee.registration.switchOutWord
        cov_registry_entry_note_activity(entry, word)
        control.pointee.registration.switchOutWord = word &+ GeneratorRegistration.switchOutStep
      }
      return control.pointee.element.take()
    }
    // The body ended: give its stack back now rather than when the generator is released.
    if let fiber = control.pointee.fiber {
      generatorLeaveRegistry(&control.pointee.registration)
      cov_fiber_destroy(fiber)
      control.pointee.fiber = nil
    }
    return nil
  }

  /// Creates the body's fiber (first `next()`).
  @usableFromInline
  func start() {
    let offset = MemoryLayout<GeneratorControl<Element>>.offset(of: \.start)!
    let startSlot = UnsafeMutableRawPointer(control) + offset
    guard let fiber = cov_fiber_create(stackSize, generatorFiberEntry, startSlot) else {
      fatalError(
        "Covenant: could not allocate a generator stack of \(stackSize == 0 ? Int(cov_stack_default_size()) : stackSize) bytes"
      )
    }
    control.pointee.fiber = fiber
    GeneratorRegistration.check(GeneratorControl<Element>.self)
    cov_fiber_note_wait_detail(fiber, metadataBits(Element.self))  // before it is listed
    let slot = CoroutineRegistry.enter(
      UnsafeRawPointer(control), tags: UInt(COV_REGISTRY_GENERATOR))
    control.pointee.registration.slot = slot
    if slot != COV_REGISTRY_NO_SLOT {
      control.pointee.registration.entry = cov_registry_entry(slot)
    }
  }
}

/// Takes a generator whose body ended (or is dropped) out of the registry, before its fiber is
/// destroyed.
@usableFromInline
func generatorLeaveRegistry(_ registration: inout GeneratorRegistration) {
  CoroutineRegistry.leave(registration.slot)
  registration.slot = COV_REGISTRY_NO_SLOT
  registration.entry = nil
}

/// `yield` as the body sees it: hands `element` over and switches back to the consumer.
///
/// Kept as small as possible (cold paths out of line) so that the closure's context forwarder
/// inlines it: every frame on the body's side is a return the CPU mispredicts after each switch
/// back into the body (its return-stack buffer then describes the consumer's stack).
@inlinable @inline(__always)
func generatorYield<Element>(
  _ element: Element, _ control: UnsafeMutablePointer<GeneratorControl<Element>>
) throws {
  if control.pointee.phase != .running { generatorYieldMisuse(control.pointee.phase) }
  control.pointee.element = element
  control.pointee.phase = .suspended
  cov_fiber_suspend()
  if control.pointee.phase == .dropping { throw generatorDropped() }
}

/// The error a pending `yield` throws when its generator is dropped.
@usableFromInline @inline(never)
func generatorDropped() -> any Error { GeneratorDropped() }

/// Stops the process: `yield` was called when its body was not the one running.
@usableFromInline @inline(never)
func generatorYieldMisuse(_ phase: GeneratorPhase) -> Never {
  if phase == .dropping {
    fatalError(
      "Covenant.Generator body called yield after its generator was dropped: it caught the error thrown by yield; let that error propagate"
    )
  }
  fatalError("Covenant.Generator yield called outside its generator's body")
}
