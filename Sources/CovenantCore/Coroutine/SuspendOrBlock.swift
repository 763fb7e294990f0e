import Dispatch

/// Waits until the callback handed to `register` is called (a join: what coroutine snapshots
/// report): suspends the current coroutine, or,
/// outside a coroutine, blocks the calling thread (the way to wait for coroutines from code
/// that is not one, e.g. a test or `main`). The callback may be called at once, or later on any
/// thread; calls after the first are ignored.
///
/// - Throws: `CoroutineError.canceled` if the waiting coroutine is cancelled first.
func suspendOrBlock(until register: (@escaping @Sendable () -> Void) -> Void) throws(CoroutineError)
{
  if CoroutineContext.currentUnmanaged != nil {
    let coroutine = try CoroutineHandle.current()
    try coroutine.suspend(.join) { waker in register { waker.resume() } }
  } else {
    let semaphore = DispatchSemaphore(value: 0)
    register { semaphore.signal() }
    ResolutionDrain.tellQueuedBeforeWaiting()  // it may be what calls the callback
    semaphore.wait()
  }
}
