import Synchronization

/// A coroutine's registration in the cell of the promise or future it awaits: resumes the
/// await whose generation it carries (a stale notification finds its claim refused).
final class AwaitReaction: Reaction, @unchecked Sendable {
  let coroutine: CoroutineContext
  let generation = Atomic<UInt64>(0)

  init(_ coroutine: CoroutineContext) {
    self.coroutine = coroutine
    super.init()
  }

  override func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer) {
    let generation = generation.load(ordering: .relaxed)
    if coroutine.wait.claim(generation), coroutine.wait.wake() { coroutine.schedule() }
  }
}
