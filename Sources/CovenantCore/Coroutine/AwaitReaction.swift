/// A registration in an awaited cell for a coroutine that cannot register itself (see
/// `CoroutineContext.awaitResolution`): resumes the await whose generation it carries (a stale
/// notification finds its claim refused).
final class AwaitReaction: Reaction, @unchecked Sendable {
  let coroutine: CoroutineContext
  let generation: UInt64

  init(_ coroutine: CoroutineContext, generation: UInt64) {
    self.coroutine = coroutine
    self.generation = generation
    super.init()
  }

  override func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer) {
    if coroutine.wait.claim(generation), coroutine.wait.wake() { coroutine.schedule() }
  }
}
