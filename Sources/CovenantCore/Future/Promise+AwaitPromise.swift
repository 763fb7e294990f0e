import Dispatch

/// Waits for `promise` and returns its value or throws its error.
///
/// Inside a coroutine this **suspends** the coroutine (as `promise.await()` does). Outside one
/// it blocks the calling thread until the promise resolves: do not call it on the queue that
/// has to resolve the promise (for example on the main thread for a promise chained on
/// `.main`) — that queue can never run, and the call deadlocks.
public func awaitPromise<Value>(_ promise: Promise<Value>) throws -> Value {
  if Coroutine.isInsideCoroutine { return try promise.await() }
  ResolutionDrain.tellQueuedBeforeWaiting()  // it may be what resolves `promise`
  if let result = promise.result { return try result.get() }
  let done = DispatchSemaphore(value: 0)
  promise.whenResolved { _ in done.signal() }
  done.wait()
  return try promise.result!.get()
}
