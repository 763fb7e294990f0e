/// One case of a `CoChannel.select`, type-erased over its channel's element type.
///
/// The select drives every case through the same steps while it holds the locks of all the
/// channels involved (`withChannelLocked` / `shareLock`): `isReady`, then `complete()` for the
/// first ready case, or `register(_:)` for all of them; and, with no lock held, `deregister()`
/// and `runEffects()`. Cases are used by one coroutine at a time.
protocol SelectCase<Output>: AnyObject {
  associatedtype Output
  /// The channel, to order lock acquisition and share one lock among cases of one channel.
  var channelIdentity: ObjectIdentifier { get }
  /// Locks the channel and runs `body` with its state bound to this case.
  func withChannelLocked(_ body: () -> Void)
  /// Binds this case to the state `other` (a case of the same channel) has locked.
  func shareLock(with other: any SelectCase<Output>)
  /// The locked state, for `shareLock`.
  var lockedState: UnsafeMutableRawPointer? { get set }
  /// Whether the operation would complete now (maybe optimistic: peers can be stale).
  var isReady: Bool { get }
  /// Performs the operation without waiting; false if it turned out it would have to wait.
  func complete() -> Bool
  /// Queues a waiter for this case, woken through `waker`.
  func register(_ waker: CoroutineWaker)
  /// Removes this case's waiter (if still queued) and notes whether it won.
  func deregister()
  /// Runs what the locked steps left to do.
  func runEffects()
  /// Whether this case completed.
  var isDone: Bool { get }
  /// Runs the case's body with its outcome.
  func run() throws -> Output
}

/// What the receive and send cases share: the channel, the state bound while the select holds
/// the locks, the effects to run afterwards, and the waiter a case may have queued.
///
/// Subclasses provide the operation (`isReady`, `complete`, `register`) and record their
/// outcome when a queued waiter won (`recordWin(of:)`).
class ChannelSelectCase<Element, Output> {
  let channel: CoChannel<Element>
  var lockedState: UnsafeMutableRawPointer?
  var effects = ChannelEffects<Element>()
  var waiter: ChannelWaiter<Element>?

  init(channel: CoChannel<Element>) { self.channel = channel }

  var channelIdentity: ObjectIdentifier { ObjectIdentifier(channel) }

  var state: UnsafeMutablePointer<ChannelState<Element>> {
    lockedState!.assumingMemoryBound(to: ChannelState<Element>.self)
  }

  func withChannelLocked(_ body: () -> Void) {
    channel.state.withCriticalSection { state in
      withUnsafeMutablePointer(to: &state) { pointer in
        lockedState = UnsafeMutableRawPointer(pointer)
        body()
        lockedState = nil
      }
    }
  }

  func shareLock(with other: any SelectCase<Output>) { lockedState = other.lockedState }

  func deregister() {
    guard let waiter else { return }
    self.waiter = nil
    if waiter.isDone {
      recordWin(of: waiter)
    } else {
      channel.locked { state, effects in state.remove(waiter, &effects) }
    }
  }

  /// Records the outcome of `waiter`, which completed this case while the select waited.
  func recordWin(of waiter: ChannelWaiter<Element>) {
    preconditionFailure("ChannelSelectCase subclasses record their own outcome")
  }

  func runEffects() {
    let effects = self.effects
    self.effects = ChannelEffects()
    effects.run()
  }
}

/// `onReceive` / `onReceiveResult`.
final class ReceiveCase<Element, Output>: ChannelSelectCase<Element, Output>, SelectCase {
  let body: (Result<Element, CoChannelError>) throws -> Output
  private var outcome: Result<Element, CoChannelError>?

  init(_ channel: CoChannel<Element>, _ body: @escaping (Result<Element, CoChannelError>) throws -> Output) {
    self.body = body
    super.init(channel: channel)
  }

  var isReady: Bool { state.pointee.isReceiveReady }

  func complete() -> Bool {
    outcome = state.pointee.receiveNow(&effects)
    return outcome != nil
  }

  func register(_ waker: CoroutineWaker) {
    let waiter = ChannelWaiter<Element>(waker: waker)
    self.waiter = waiter
    state.pointee.receivers.append(.waiter(waiter))
  }

  override func recordWin(of waiter: ChannelWaiter<Element>) { outcome = waiter.receiveResult }

  var isDone: Bool { outcome != nil }

  func run() throws -> Output { try body(outcome!) }
}

/// `onSend`.
final class SendCase<Element, Output>: ChannelSelectCase<Element, Output>, SelectCase {
  let element: Element
  let body: () throws -> Output
  private var outcome: Result<Void, CoChannelError>?

  init(_ channel: CoChannel<Element>, _ element: Element, _ body: @escaping () throws -> Output) {
    self.element = element
    self.body = body
    super.init(channel: channel)
  }

  var isReady: Bool { state.pointee.isSendReady }

  func complete() -> Bool {
    outcome = state.pointee.sendNow(element, &effects)
    return outcome != nil
  }

  func register(_ waker: CoroutineWaker) {
    let waiter = ChannelWaiter<Element>(waker: waker, element: element)
    self.waiter = waiter
    state.pointee.senders.append(.waiter(waiter))
  }

  override func recordWin(of waiter: ChannelWaiter<Element>) {
    outcome = waiter.error.map { .failure($0) } ?? .success(())
  }

  var isDone: Bool { outcome != nil }

  func run() throws -> Output {
    try outcome!.get()
    return try body()
  }
}
