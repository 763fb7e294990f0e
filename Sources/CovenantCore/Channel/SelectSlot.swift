/// What a `select` asks of a case it kept (`SelectSlot`) while it waits.
@usableFromInline
enum SelectSlotStep {
  /// Queue a waiter woken through this waker, or perform the operation after winning the
  /// waker's claim if it is ready after all.
  case register(CoroutineWaker)
  /// The wait is over: keep the outcome a peer left, or take the waiter out of its queue.
  case withdraw
  /// The select is over: release everything the slot holds.
  case discard
}

/// A kept case's answer to a `SelectSlotStep` (`discard` answers `lost`, and is not asked).
@usableFromInline
enum SelectSlotReply {
  /// The case has an outcome: it is the one performed (after `register`: wake the coroutine).
  case won
  /// After `register`: the waiter is queued.
  case queued
  /// After `register`: the case claimed the coroutine's wait, but the peers it found were
  /// stale: nothing was performed; wake the coroutine and start over.
  case stale
  /// The case is not the one performed: after `register`, the wait was already claimed by
  /// someone else (stop registering); after `withdraw`, another case won (or a timeout or a
  /// cancel did).
  case lost
}

/// A `select` case kept for later — for waiting, or for the random pick of
/// `selectUnbiased` — with its types erased: the select holds cases on channels of any
/// element types side by side, in memory it allocates on its own stack.
///
/// Calling the case through protocol or class methods would run generic code unspecialized
/// (asking the runtime for type metadata on every call), so a slot carries its operations as
/// functions taken where the case was added, in code specialized for its types
/// (`SelectSlotOperations`), and its typed parts in raw storage that only those functions read.
@usableFromInline
struct SelectSlot<Output> {
  @usableFromInline typealias Pointer = UnsafeMutablePointer<SelectSlot<Output>>

  /// `register` / `withdraw` / `discard`.
  @usableFromInline let step: (Pointer, SelectSlotStep) -> SelectSlotReply
  /// Runs the body: after performing the operation now (`attempt: true`; `nil` if it could
  /// not complete), or with the outcome of the finished wait (`attempt: false`).
  @usableFromInline let complete: (Pointer, _ attempt: Bool) throws -> Output?
  /// The `CoChannel`, retained by the slot.
  @usableFromInline let channel: UnsafeRetainedBits<AnyObject>
  /// The `ChannelWaiter` of the current wait (retained), if one is queued or holds an outcome;
  /// else `none`.
  @usableFromInline var waiter = UnsafeRetainedBits<AnyObject>.none
  /// The `SelectPayload`.
  @usableFromInline var payload = SelectPayloadStorage()

  @inlinable
  init(
    step: @escaping (Pointer, SelectSlotStep) -> SelectSlotReply,
    complete: @escaping (Pointer, Bool) throws -> Output?,
    channel: UnsafeRetainedBits<AnyObject>
  ) {
    self.step = step
    self.complete = complete
    self.channel = channel
  }
}

/// The operations of a kept case of `operation`'s type with a body returning `Output`.
@usableFromInline
enum SelectSlotOperations<Operation: ChannelOperation, Output> {
  @usableFromInline typealias Element = Operation.Element
  @usableFromInline typealias Payload = SelectPayload<Operation, Output>

  /// Stores a case in the uninitialized slot at `slot`.
  @inlinable
  static func initialize(
    _ slot: SelectSlot<Output>.Pointer, channel: CoChannel<Element>, _ payload: Payload
  ) {
    slot.initialize(
      to: SelectSlot(
        step: { slot, step in Self.step(slot, step) },
        complete: { slot, attempt in try Self.complete(slot, attempt: attempt) },
        channel: UnsafeRetainedBits<AnyObject>(retaining: channel)))
    SelectPayloadStorage.initialize(&slot.pointee.payload, to: payload)
  }

  @inlinable
  static func step(_ slot: SelectSlot<Output>.Pointer, _ step: SelectSlotStep) -> SelectSlotReply {
    switch step {
    case .register(let waker): return register(slot, waker)
    case .withdraw: return withdraw(slot)
    case .discard:
      let waiter = slot.pointee.waiter
      if !waiter.isNone {
        channel(of: slot).recycle(waiterObject(waiter))
        waiter.release()
      }
      SelectPayloadStorage.destroy(&slot.pointee.payload, as: Payload.self)
      slot.pointee.channel.release()
      _ = slot.move()
      return .lost
    }
  }

  @inlinable
  static func register(_ slot: SelectSlot<Output>.Pointer, _ waker: CoroutineWaker)
    -> SelectSlotReply
  {
    let channel = channel(of: slot)
    let done = slot.pointee.waiter
    if !done.isNone {
      // The case won an earlier round of the same select, but a derived receiver's stage
      // dropped what it received: its waiter, completed and out of its queue, is done with.
      channel.recycle(waiterObject(done))
      done.release()
      slot.pointee.waiter = .none
    }
    let operation = SelectPayloadStorage.read(&slot.pointee.payload, as: Payload.self).operation
    let waiter = channel.makeWaiter(waker, element: operation.carriedElement)
    let result = channel.locked { state, effects in
      state.enqueueOrPerform(operation, waiter: waiter, waker: waker, &effects)
    }
    switch result {
    case .queued:
      slot.pointee.waiter = UnsafeRetainedBits<AnyObject>(retaining: waiter)
      return .queued
    case .performed(let outcome?):
      operation.store(outcome, in: waiter)
      slot.pointee.waiter = UnsafeRetainedBits<AnyObject>(retaining: waiter)
      return .won
    case .performed(nil):
      channel.recycle(waiter)
      return .stale
    case .lost:
      channel.recycle(waiter)
      return .lost
    }
  }

  @inlinable
  static func withdraw(_ slot: SelectSlot<Output>.Pointer) -> SelectSlotReply {
    let held = slot.pointee.waiter
    guard !held.isNone else { return .lost }
    let waiter = waiterObject(held)
    if waiter.isDone { return .won }
    slot.pointee.waiter = .none
    let operation = SelectPayloadStorage.read(&slot.pointee.payload, as: Payload.self).operation
    channel(of: slot).takeOut(waiter, operation)
    held.release()
    return .lost
  }

  /// The slot's channel (kept alive by the slot).
  @inlinable
  static func channel(of slot: SelectSlot<Output>.Pointer) -> CoChannel<Element> {
    unsafeDowncast(
      slot.pointee.channel.unmanaged.takeUnretainedValue(), to: CoChannel<Element>.self)
  }

  @inlinable
  static func waiterObject(_ waiter: UnsafeRetainedBits<AnyObject>) -> ChannelWaiter<Element> {
    unsafeDowncast(waiter.unmanaged.takeUnretainedValue(), to: ChannelWaiter<Element>.self)
  }

  @inlinable
  static func complete(_ slot: SelectSlot<Output>.Pointer, attempt: Bool) throws -> Output? {
    let payload = SelectPayloadStorage.read(&slot.pointee.payload, as: Payload.self)
    let outcome: Result<Operation.Value, CoChannelError>
    if attempt {
      let channel = channel(of: slot)
      guard channel.mightCompleteNow(payload.operation),
        let performed = channel.performNow(payload.operation)
      else { return nil }
      outcome = performed
    } else {
      outcome = payload.operation.outcome(of: waiterObject(slot.pointee.waiter))
    }
    do {
      return try payload.body.run(with: outcome)
    } catch is StageDroppedElement {
      return nil  // a derived receiver's stage dropped what the case received
    }
  }
}
