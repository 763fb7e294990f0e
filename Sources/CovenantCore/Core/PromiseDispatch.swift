import Dispatch

/// The single place where promise blocks are handed to dispatch queues.
///
/// Every observer and work block belongs to `DispatchGroup.promises` from the moment it is
/// handed over until it has run, so `waitForPromises(timeout:)` sees it. A block for the queue
/// whose task is running on this thread goes into that task's hand-off slot (`SchedulerTurn`):
/// it runs after the current block, on the same queue, without a new `async`.
@usableFromInline
enum PromiseDispatch {
  /// Dispatches `reaction` (whose `run` leaves the group) on `queue`, entering the group.
  @usableFromInline static func dispatch(_ reaction: Reaction, on queue: DispatchQueue) {
    DispatchGroup.promises.enter()
    if SchedulerTurn.handOff(reaction, to: ObjectIdentifier(queue)) { return }
    DirectDispatch.async(reaction, on: queue)
  }

  /// Runs `block` asynchronously on `queue`, through the group (for the less frequent paths:
  /// work-block initializers, `retry`).
  @usableFromInline static func async(on queue: DispatchQueue, _ block: @escaping () -> Void) {
    dispatch(BlockReaction(queue: queue, block), on: queue)
  }

  /// Runs `block` on `queue` once `interval` seconds have passed (negative or NaN: at once).
  ///
  /// When `grouped` (the default), the wait and the block belong to `DispatchGroup.promises`,
  /// and `block` is released before the group is left. A timer that must not hold
  /// `waitForPromises(timeout:)` up passes `false` (the `timeout` operator's: it only matters
  /// while its promise is pending, and a pending promise is in the group anyway).
  static func asyncAfter(
    _ interval: Double, on queue: DispatchQueue, grouped: Bool = true,
    _ block: @escaping () -> Void
  ) {
    let seconds = interval > 0 ? min(interval, 1e9) : 0  // also maps NaN to 0
    let deadline = DispatchTime.now() + seconds
    guard grouped else {
      let work = UncheckedSendable(block)
      queue.asyncAfter(deadline: deadline) { work.value() }
      return
    }
    let work = RunOnce(block)
    DispatchGroup.promises.enter()
    queue.asyncAfter(deadline: deadline) {
      work.run()
      DispatchGroup.promises.leave()
    }
  }
}

/// A block run once and released right after, before whoever ran it signals completion.
/// `@unchecked Sendable`: set at creation, then read and cleared once by the queue that runs it.
private final class RunOnce: @unchecked Sendable {
  private var block: (() -> Void)?
  init(_ block: @escaping () -> Void) { self.block = block }
  func run() {
    let block = self.block
    assert(block != nil, "a dispatched promise block runs once")
    self.block = nil
    block?()
  }
}
