/// A channel between coroutines (SwiftCoroutine's `CoChannel`, Go's `chan`, Kotlin's
/// `Channel`): senders put elements in, receivers take them out in the same order.
///
/// ```swift
/// let channel = CoChannel<Int>(capacity: 1)
/// DispatchQueue.global().startCoroutine {
///   for value in 0..<100 { try channel.awaitSend(value) }   // suspends while the buffer is full
///   channel.close()
/// }
/// DispatchQueue.global().startCoroutine {
///   for value in channel.makeIterator() { print(value) }     // ends when closed and drained
/// }
/// ```
///
/// - `BufferType` decides when senders suspend: `.none` (rendezvous: until a receiver takes the
///   element), `.buffered(capacity:)` (while the buffer is full), `.unlimited` (never),
///   `.conflated` (never: a new element replaces the one not yet received).
/// - `awaitSend` / `awaitReceive` suspend the calling coroutine, not the thread; `offer`,
///   `poll`, `whenReceive`, `receiveFuture` and `sendFuture` never suspend and work anywhere.
/// - Fairness: waiting senders are served in the order they started waiting, and so are
///   waiting receivers.
/// - `close()` stops sending; receivers still get everything sent before (including the
///   elements of senders suspended at that moment), then `CoChannelError.closed`.
///   `cancel()` drops everything and fails every waiting and later operation with
///   `CoChannelError.canceled`.
/// - `CoChannel.select` waits on several channel operations at once.
/// - Memory: a buffer is allocated as it fills — 4 slots for the first element, doubling up to
///   the capacity — so an empty channel costs the same whatever its capacity (about 240 bytes,
///   with no buffer at all), and a `.buffered(capacity: 1_024)` outbox that never holds more
///   than a few elements never holds more than a few slots. The buffer keeps the size it grew
///   to (a channel that fills and drains again and again allocates only while it first grows);
///   cancelling the channel frees it.
///
/// Threading: every member may be called from any thread, by any number of senders and
/// receivers. Each channel has one mutex; callbacks, future observers and coroutine wake-ups
/// run after it is released, on the thread whose operation completed them. `@unchecked
/// Sendable`: all mutable state is inside that mutex; elements cross threads by design.
public final class CoChannel<Element>: @unchecked Sendable {
  /// How a channel buffers elements.
  public enum BufferType: Equatable, Sendable {
    /// No buffer: a send waits until a receiver takes the element (rendezvous).
    case none
    /// Up to `capacity` elements; senders wait while it is full. A channel normalises it, as
    /// SwiftCoroutine does: a capacity of 0 (or less) is `.none`, `Int.max` is `.unlimited`.
    /// The buffer's memory is allocated as it fills, never up front: a large capacity costs
    /// nothing until it is used.
    case buffered(capacity: Int)
    /// Any number of elements; senders never wait.
    case unlimited
    /// At most one element; a send replaces an element not yet received, and never waits.
    case conflated
  }

  @usableFromInline let state: InlineMutex<ChannelState<Element>>

  /// One waiter kept for reuse (a `ChannelWaiter<Element>`, retained, or `none`), so that a
  /// coroutine that waits on this channel again and again does not allocate and free a waiter
  /// each time. Typed as any object: the channel's `deinit`, unspecialized, releases it
  /// without the waiter's generic type.
  @usableFromInline let spareWaiter = InlineAtomic<UnsafeRetainedBits<AnyObject>>(.none)

  /// `ChannelState.readiness` as of the end of the last locked operation: lets a `select`
  /// pass over a case that cannot complete without taking the channel's lock. Stored (plainly)
  /// at the end of every locked operation, so a thread that reads "not ready" is at worst a
  /// moment behind an operation that is completing concurrently — as if it had looked a
  /// moment earlier. (Operations that change the state without `locked` only ever make it
  /// less ready, which the hint may lag behind.)
  /// (Allocated separately, so that `locked` reaches it without capturing the channel.)
  @usableFromInline let readiness: UnsafeMutablePointer<InlineByteAtomic<UInt8>>

  /// The channel's buffer type, normalised: never `.buffered` with a capacity of 0 or less
  /// (that is `.none`) or of `Int.max` (that is `.unlimited`).
  public let bufferType: BufferType

  /// Creates a channel (by default with an unlimited buffer).
  ///
  /// `.buffered(capacity: 0)` (or less) makes a `.none` channel and
  /// `.buffered(capacity: .max)` an `.unlimited` one; `bufferType` says so afterwards.
  public init(bufferType: BufferType = .unlimited) {
    self.bufferType = bufferType.normalized
    let initial: ChannelState<Element>
    switch bufferType {
    case .none: initial = ChannelState(capacity: 0, isConflated: false)
    case .buffered(let capacity):
      initial = ChannelState(capacity: Swift.max(0, capacity), isConflated: false)
    case .unlimited: initial = ChannelState(capacity: Int.max, isConflated: false)
    case .conflated: initial = ChannelState(capacity: 1, isConflated: true)
    }
    readiness = Self.makeReadiness(initial)
    state = InlineMutex(initial)
  }

  /// A channel of `capacity` elements (at least 1) whose sends never wait: a send to a full
  /// buffer drops the oldest element (a stream's `.dropOldest` buffer; `.conflated` for 1).
  @usableFromInline init(droppingOldestBeyond capacity: Int) {
    let capacity = Swift.max(1, capacity)
    bufferType = capacity == 1 ? .conflated : BufferType.buffered(capacity: capacity).normalized
    let initial = ChannelState<Element>(capacity: capacity, isConflated: true)
    readiness = Self.makeReadiness(initial)
    state = InlineMutex(initial)
  }

  /// The `readiness` byte of a new channel whose state is `initial`.
  private static func makeReadiness(
    _ initial: ChannelState<Element>
  ) -> UnsafeMutablePointer<InlineByteAtomic<UInt8>> {
    let readiness = UnsafeMutablePointer<InlineByteAtomic<UInt8>>.allocate(capacity: 1)
    readiness.initialize(to: InlineByteAtomic(initial.readiness))
    return readiness
  }

  deinit {
    // Nobody can send or receive any more: what still waits on the channel (`whenReceive`
    // callbacks, `receiveFuture` futures, `whenCanceled` / `whenComplete` callbacks) would
    // wait forever. Cancel, as SwiftCoroutine's channels do on deinit, so that they all run
    // with `CoChannelError.canceled`. (A suspended coroutine holds the channel, so none waits.)
    cancel()
    let spare = spareWaiter.exchange(.none, ordering: .acquiring)
    if !spare.isNone { spare.release() }
    readiness.deinitialize(count: 1)
    readiness.deallocate()
  }

  /// Creates a channel with a buffer of `capacity` elements (`.buffered(capacity:)`): with a
  /// capacity of 0 (or less) a `.none` channel, with `Int.max` an `.unlimited` one. Nothing is
  /// allocated for the buffer until elements are buffered (see "Memory" above).
  public convenience init(capacity: Int) {
    self.init(bufferType: .buffered(capacity: capacity))
  }

  /// Runs `body` with the state locked, then the effects it produced with the lock released.
  @inlinable @inline(__always)
  func locked<R>(_ body: (inout ChannelState<Element>, inout ChannelEffects<Element>) -> R) -> R {
    let readiness = self.readiness  // a plain pointer: the closure captures no reference
    let (result, effects) = state.withCriticalSection { state in
      var effects = ChannelEffects<Element>()
      let result = body(&state, &effects)
      readiness.pointee.store(state.readiness, ordering: .relaxed)
      return (UncheckedSendable(result), effects)
    }
    effects.run()
    return result.value
  }

  /// A waiter for the current coroutine's wait: the spare one if there is one.
  @inlinable
  func makeWaiter(_ waker: CoroutineWaker, element: Element?) -> ChannelWaiter<Element> {
    let spare = spareWaiter.exchange(.none, ordering: .acquiring)
    if !spare.isNone {
      let waiter = spare.assumingObject(ChannelWaiter<Element>.self).take()
      waiter.reuse(waker: waker, element: element)
      return waiter
    }
    return ChannelWaiter(waker: waker, element: element)
  }

  /// Keeps `waiter` for reuse. Only for a waiter that no queue holds any more and whose wait
  /// is over (its result taken), so that nobody else can touch it.
  @inlinable
  func recycle(_ waiter: ChannelWaiter<Element>) {
    waiter.clear()
    let bits = UnsafeRetainedBits(retaining: waiter).assumingObject(AnyObject.self)
    let old = spareWaiter.exchange(bits, ordering: .acquiringAndReleasing)
    if !old.isNone { old.assumingObject(ChannelWaiter<Element>.self).release() }
  }

  // MARK: Views

  /// The channel's send side: pass it to producers that must not receive.
  @inlinable public var sender: Sender { Sender(self) }

  /// The channel's receive side: pass it to consumers that must not send.
  @inlinable public var receiver: Receiver { Receiver(self) }

  /// Both sides at once.
  ///
  /// ```swift
  /// let (receiver, sender) = CoChannel<Int>().pair
  /// ```
  public var pair: (receiver: Receiver, sender: Sender) { (receiver, sender) }

  // MARK: State

  /// The number of elements that can be received without waiting: those buffered plus those
  /// of suspended senders.
  public var count: Int { state.withCriticalSection { $0.count } }

  /// Whether `count` is 0.
  public var isEmpty: Bool { count == 0 }

  // MARK: Close and cancel

  /// Closes the channel for sending. Receivers still get every element sent before (buffered
  /// ones, and those of senders suspended now, which then return normally), after which
  /// receiving fails with `CoChannelError.closed`. Later sends throw `closed`.
  ///
  /// - Returns: `true` if this call closed the channel; `false` if it was already closed or
  ///   cancelled.
  @discardableResult
  public func close() -> Bool {
    locked { state, effects in state.close(&effects) }
  }

  /// Whether the channel no longer accepts elements (it was closed or cancelled).
  public var isClosed: Bool { state.withCriticalSection { $0.phase != .open } }

  /// Cancels the channel: drops buffered and waiting elements, and makes every waiting and
  /// later operation fail with `CoChannelError.canceled` (`poll` returns `nil`, `offer`
  /// `false`). Runs the `whenCanceled` callbacks, then the `whenComplete` ones if they have not
  /// run yet. Idempotent.
  public func cancel() {
    locked { state, effects in state.cancel(&effects) }
  }

  /// Whether the channel was cancelled.
  public var isCanceled: Bool { state.withCriticalSection { $0.phase == .canceled } }

  /// Calls `callback` once if the channel is cancelled (at once if it already is), on the
  /// cancelling thread.
  public func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
    let runNow = state.withCriticalSection { state -> Bool in
      if state.phase == .canceled { return true }
      state.cancelCallbacks.append(callback)
      return false
    }
    if runNow { callback() }
  }

  /// Calls `callback` once when the channel is complete: when it is cancelled, or when it was
  /// closed and everything sent has been received. At once if it already is.
  public func whenComplete(_ callback: @escaping () -> Void) {
    let runNow = state.withCriticalSection { state -> Bool in
      if state.isComplete { return true }
      state.completionCallbacks.append(callback)
      return false
    }
    if runNow { callback() }
  }
}

extension CoChannel: CoCancellable {}

extension CoChannel.BufferType {
  /// The same buffering, spelled one way: `.buffered` only for a capacity from 1 to
  /// `Int.max - 1`.
  var normalized: Self {
    switch self {
    case .buffered(let capacity) where capacity <= 0: return .none
    case .buffered(Int.max): return .unlimited
    default: return self
    }
  }
}
