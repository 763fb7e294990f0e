import Synchronization

/// A coroutine's registration in the cell of the promise or future it awaits: resumes the
/// await whose generation it carries (a stale notification finds its claim refused).
final class AwaitReaction: Reaction, @unchecked Sendable {
  let coroutine: CoroutineContext
  let generation = Atomic<UInt64>(0)

  /// `wakesInline`: whether waking the coroutine may run it on the spot (a scheduler other
  /// than a dispatch queue, whose wake-up is a hand-off or an `async`).
  init(_ coroutine: CoroutineContext, wakesInline: Bool) {
    self.coroutine = coroutine
    super.init(resolvesInlineWhenTold: wakesInline)
  }

  override func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer) {
    let generation = generation.load(ordering: .relaxed)
    if coroutine.wait.claim(generation), coroutine.wait.wake() { coroutine.schedule() }
  }
}
