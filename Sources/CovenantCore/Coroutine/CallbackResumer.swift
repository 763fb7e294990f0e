/// The waker a callback-style await (`Coroutine.await { callback in … }`) hands out, inside the
/// callback: when the callback is released without having been called, the await can never be
/// resumed (only cancelled), and the await is marked abandoned so that coroutine snapshots and
/// `expectNoSuspendedCoroutines` report the coroutine as leaked.
final class CallbackResumer: Sendable {
  let waker: CoroutineWaker

  init(_ waker: CoroutineWaker) { self.waker = waker }

  deinit {
    // A no-op if the await was claimed (the callback ran, or a cancel won) or is over.
    waker.coroutine.wait.abandon(waker.generation)
  }
}
