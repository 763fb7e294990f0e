import Dispatch

/// Waits until the callback handed to `register` is called (a join: what coroutine snapshots
/// report): suspends the current coroutine, or,
/// outside a coroutine, blocks the calling thread (the way to wait for coroutines from code
/// that is not one, e.g. a test or `main`). The callback may be called at once, or later on any
/// thread; calls after the first are ignored.
///
/// `register` returns what `unregister` needs to withdraw the callback (`nil` if there is
/// nothing to withdraw, e.g. it called the callback at once). A coroutine cancelled while it
/// waits withdraws it: the callback holds the coroutine, which would otherwise stay allocated,
/// with its stack, until whatever it waited for happens (maybe never), and each new wait would
/// leave one more callback behind.
///
/// - Throws: `CoroutineError.canceled` if the waiting coroutine is cancelled first.
func suspendOrBlock<Registration>(
  until register: (@escaping @Sendable () -> Void) -> Registration?,
  unregister: (Registration) -> Void
) throws(CoroutineError) {
  if CoroutineContext.currentUnmanaged != nil {
    let coroutine = try CoroutineHandle.current()
    var registration: Registration?
    do {
      try coroutine.suspend(.join) { waker in registration = register { waker.resume() } }
    } catch {
      if let registration { unregister(registration) }
      throw error
    }
  } else {
    let semaphore = DispatchSemaphore(value: 0)
    _ = register { semaphore.signal() }
    ResolutionDrain.tellQueuedBeforeWaiting()  // it may be what calls the callback
    semaphore.wait()
  }
}
