/// Resumes one particular await of one coroutine, at most once.
///
/// `resume()` is the usual call. Code that must deliver a value only if it wins (channels,
/// select, timeouts) calls `claim()` (inside a lock, if delivering something), delivers, then
/// `wake()` (outside it). Called by the `@inlinable` (client-specialized) code of futures and
/// channels, so the type and its methods are `@usableFromInline`; the coroutine machinery
/// behind them stays internal.
///
/// A waker is meant to be called from any thread: its state is the coroutine's atomic
/// `WaitState`.
@usableFromInline
struct CoroutineWaker: Sendable {
  let coroutine: CoroutineContext
  let generation: UInt64

  /// Wins the right to resume this await; false if someone else already did (or it is over).
  @usableFromInline func claim() -> Bool { coroutine.wait.claim(generation) }

  /// Whether this await has been claimed, and not woken yet (for assertions).
  @usableFromInline var isClaimed: Bool {
    let flags = coroutine.wait.flags
    return coroutine.wait.currentGeneration == generation && flags & WaitState.claimed != 0
      && flags & WaitState.woken == 0
  }

  /// Lets the coroutine continue; call exactly once after a successful `claim()` (debug builds
  /// check both: `WaitState.wake`).
  @usableFromInline func wake() {
    if coroutine.wait.wake() { coroutine.schedule() }
  }

  /// `claim()` then `wake()`. Returns false (doing nothing) if the await was already resumed.
  @usableFromInline @discardableResult
  func resume() -> Bool {
    guard claim() else { return false }
    wake()
    return true
  }
}
