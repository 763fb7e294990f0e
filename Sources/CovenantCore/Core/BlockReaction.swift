import Dispatch

/// A block dispatched as a promise task: runs once on its queue.
// `@unchecked Sendable` (restated from `Reaction`): immutable fields; the block runs once, on
// its queue, after the dispatch that hands it over.
final class BlockReaction: Reaction, @unchecked Sendable {
  let queue: DispatchQueue
  let block: () -> Void

  init(queue: DispatchQueue, _ block: @escaping () -> Void) {
    self.queue = queue
    self.block = block
  }

  override func run() { block() }
  override var schedulerIdentity: ObjectIdentifier? { ObjectIdentifier(queue) }
  override var leavesPromiseGroup: Bool { true }
  override func reschedule() { DirectDispatch.async(self, on: queue) }
}
