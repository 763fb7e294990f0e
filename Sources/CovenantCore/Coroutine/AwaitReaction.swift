/// A registration in an awaited cell for a coroutine that cannot register itself (see
/// `CoroutineContext.awaitResolution`): resumes the await whose generation it carries (a stale
/// notification finds its claim refused).
// `@unchecked Sendable` (restated from `Reaction`): immutable fields.
final class AwaitReaction: Reaction, @unchecked Sendable {
  let coroutine: CoroutineContext
  let generation: UInt64

  /// `wakesInline`: whether waking the coroutine may run it on the spot (a scheduler other
  /// than a dispatch queue, whose wake-up is a hand-off or an `async`).
  init(_ coroutine: CoroutineContext, generation: UInt64, wakesInline: Bool) {
    self.coroutine = coroutine
    self.generation = generation
    super.init(resolvesInlineWhenTold: wakesInline)
  }

  override func observedResolution(of owner: Unmanaged<AnyObject>, cell: UnsafeRawPointer) {
    if coroutine.wait.claim(generation), coroutine.wait.wake() { coroutine.schedule() }
  }
}
