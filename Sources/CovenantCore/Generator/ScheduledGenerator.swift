/// A sequence produced by a coroutine on a scheduler (coobjc's `co_sequence_onqueue`), made with
/// ``CoroutineScheduler/generator(in:name:file:line:_:)``.
///
/// ```swift
/// let messages = DispatchQueue.global().generator { (yield: ScheduledGenerator<Message>.Yield) in
///   while true {
///     try yield(try inbox.fetchNext())     // may await: the body is a coroutine
///   }
/// }
/// DispatchQueue.main.startCoroutine {
///   for message in messages.prefix(10) { show(message) }   // suspends in next(), not blocks
/// }
/// ```
///
/// **How it runs.** The body is a coroutine on the generator's scheduler, started at once: it
/// runs to its first `yield` and waits there until a consumer asks for an element; then the
/// argument of that `yield` is evaluated (it may await anything: a future, a channel, a delay),
/// handed to the consumer, and the body runs on to its next `yield`, where it waits again. So
/// after a consumer has taken *n* elements, the body has run the statements after its *n*-th
/// `yield` (coobjc's semantics: one ahead), and never computes an element nobody asked for.
///
/// **Consuming.** `next()` suspends the calling coroutine until the element is there, and
/// blocks the calling thread outside a coroutine (never call it outside a coroutine on the
/// generator's own serial queue: the body could not run). The generator is a `Sequence` either
/// way (single pass: it is its own iterator), and may be consumed by many coroutines at once,
/// on any schedulers: each element goes to one of them, in the order they asked.
///
/// **End and errors.** When the body returns, `next()` returns `nil` from then on. If it
/// throws, the sequence ends too: `next()` returns `nil`, `error` holds the error, and the
/// first `nextElement()` to reach the end throws it (later ones return `nil`).
///
/// **Cancelling** — by `cancel()`, by a ``CoScope`` it was started in or added to, or by
/// dropping the last reference to the generator — cancels the body's coroutine: its pending
/// `yield` (or any `await`) throws `CoroutineError.canceled`, the body unwinds (its `defer`
/// blocks run, its frames release what they hold) and its coroutine ends. A body that has not
/// started when cancelled never runs. Consumers then reach the end; `nextElement()` throws
/// `CoroutineError.canceled` to the first of them. `join()` waits until the body has ended.
///
/// Threading: every member may be called from any thread. `@unchecked Sendable` like
/// ``CoFuture``: the state is in a channel and a lock; elements move to the consumers' threads
/// by design.
public final class ScheduledGenerator<Element>: Sequence, IteratorProtocol, CoCancellable,
  @unchecked Sendable
{
  let core: ScheduledGeneratorCore<Element>
  /// The body's coroutine; weak, as in `CoroutineFuture`: it keeps itself alive while it runs,
  /// and `nil` means it has ended.
  private weak var coroutine: CoroutineContext?

  init(
    scheduler: any CoroutineScheduler, scope: CoScope?, name: String?, file: StaticString,
    line: UInt, body: @escaping @Sendable (Yield) throws -> Void
  ) {
    let core = ScheduledGeneratorCore<Element>()
    self.core = core
    let coroutine = CoroutineContext(
      scheduler: scheduler, startFailureReceiver: core, file: file, line: line
    ) {
      // A generator cancelled (or dropped) before its body started: the body never runs.
      if Coroutine.isCanceled { return core.finish(failure: nil, canceled: true) }
      var failure: (any Error)?
      do { try body(Yield(core)) } catch { failure = error }
      core.finish(failure: failure, canceled: Coroutine.isCanceled)
    }
    self.coroutine = coroutine
    // Joiners wake once the coroutine has finished: the body and its captures are released.
    coroutine.whenFinished { core.ended.success() }
    scope?.addCoroutine(coroutine)
    coroutine.start(name: name)
  }

  /// Dropping the generator cancels its body, which unwinds and releases what it holds.
  deinit { coroutine?.cancel() }

  /// The next element: waits until the body has yielded it (suspending the calling coroutine,
  /// or blocking the thread outside one); `nil` once the body has ended — returned, thrown or
  /// been cancelled — or if the calling coroutine is cancelled while it waits.
  public func next() -> Element? { try? core.next(throwingFailure: false) }

  /// Like `next()`, but throws: the error the body ended with (to the first `nextElement()`
  /// that reaches the end; later calls return `nil`), or `CoroutineError.canceled` when the calling
  /// coroutine is cancelled while it waits (its request is withdrawn: no element is lost).
  ///
  /// ```swift
  /// while let record = try records.nextElement() { store(record) }   // rethrows a body error
  /// ```
  public func nextElement() throws -> Element? { try core.next(throwingFailure: true) }

  /// Cancels the body's coroutine (see the type's documentation). Idempotent; nothing happens
  /// once the body has ended.
  public func cancel() { coroutine?.cancel() }

  /// Whether the generator was cancelled (by `cancel()`, a scope, or being dropped).
  public var isCanceled: Bool {
    if let coroutine { return coroutine.isCanceled }
    return core.end.withCriticalSection { $0.canceled }
  }

  /// Whether the body has ended: returned, thrown, or unwound after a cancel.
  public var isFinished: Bool { core.end.withCriticalSection { $0.isFinished } }

  /// The error the body ended with (`CoroutineError.canceled` if it was cancelled); `nil` while
  /// it runs and after a normal end.
  public var error: (any Error)? { core.end.withCriticalSection { $0.failure } }

  /// Waits until the body has ended and its coroutine has finished (suspending the calling
  /// coroutine, or blocking the thread outside one): after `cancel()`, until the body has
  /// unwound and released what it held.
  ///
  /// - Throws: `CoroutineError.canceled` if the joining coroutine is cancelled while it waits.
  public func join() throws { try core.ended.join() }

  /// Calls `callback` once the body has ended (at once if it has): the `CoCancellable` form,
  /// which lets a ``CoScope`` drop the generator then.
  public func whenComplete(_ callback: @escaping () -> Void) {
    core.ended.whenResolved { _ in callback() }
  }
}

extension ScheduledGenerator {
  /// What a scheduled generator's body calls to hand out an element: `try yield(element)`.
  ///
  /// The argument is evaluated only when a consumer asks for the element (an `@autoclosure`,
  /// like coobjc's `yield(…)` macro), in the body's coroutine, so it may await. A `CoFuture` or
  /// `Promise` of the element is awaited and its value handed over (coswift's
  /// `yield { promise }`).
  ///
  /// If the argument throws (or the future fails), `yield` throws that error and the waiting
  /// consumer keeps waiting, for the body's next `yield` or its end. When the generator is
  /// cancelled, `yield` throws `CoroutineError.canceled`: let it propagate, so that the body
  /// unwinds. Calling it outside its generator's body is a precondition failure.
  public struct Yield: Sendable {
    let core: ScheduledGeneratorCore<Element>

    init(_ core: ScheduledGeneratorCore<Element>) { self.core = core }

    /// The `yield` of the scheduled generator whose body is the current coroutine, if its
    /// elements are `Element`s; `nil` elsewhere. For code that cannot be handed `yield`, such
    /// as coswift's global `yield { … }` forwarded to Covenant.
    public static var current: Yield? {
      (CoroutineContext.current?.startFailureReceiver as? ScheduledGeneratorCore<Element>)
        .map(Yield.init)
    }

    /// Waits until a consumer asks, then evaluates `element` and hands it over.
    public func callAsFunction(_ element: @autoclosure () throws -> Element) throws {
      checkCaller()
      try core.deliver(element)
    }

    /// Waits until a consumer asks, then awaits `future` and hands over its value.
    public func callAsFunction(_ future: @autoclosure () throws -> CoFuture<Element>) throws {
      checkCaller()
      try core.deliver { try future().await() }
    }

    /// Waits until a consumer asks, then awaits `promise` and hands over its value.
    public func callAsFunction(_ promise: @autoclosure () throws -> Promise<Element>) throws {
      checkCaller()
      try core.deliver { try promise().await() }
    }

    /// Stops the process unless the caller is the generator's body: `yield` waits on the
    /// body's coroutine, and another coroutine (or a thread) would steal requests meant for it.
    private func checkCaller() {
      guard let coroutine = CoroutineContext.current, coroutine.startFailureReceiver === core
      else {
        fatalError("Covenant.ScheduledGenerator yield called outside its generator's body")
      }
    }
  }
}
