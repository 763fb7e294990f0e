import Dispatch

extension InlineMutex where Value == PermitState {
  /// Takes a permit, suspending the current coroutine in the FIFO queue while none is free.
  ///
  /// Returns at once, inside or outside a coroutine (even a cancelled one), when a permit is
  /// free. Returns false if `timeout` expired first, having taken nothing.
  /// - Throws: `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a
  ///   coroutine; `CoroutineError.canceled` if the coroutine is cancelled while waiting (it
  ///   then holds nothing).
  ///
  /// `kind` (`.mutex` or `.semaphore`) is what coroutine snapshots report while it waits.
  func acquire(
    _ kind: CoroutineWaitKind, timeout: DispatchTimeInterval = .never
  ) throws(CoroutineError) -> Bool {
    let holder = PermitHolder.current
    if withCriticalSection({ $0.take(for: holder) }) { return true }
    guard let coroutine = CoroutineContext.current else { throw .calledOutsideCoroutine }
    var queued: UInt64?  // the ticket of this waiter's entry
    let timedOut: Bool
    do {
      timedOut = try coroutine.suspend(kind, timeout: timeout) { waker in
        let tookIt = withCriticalSection { state -> Bool in
          if state.available == 0 {
            queued = state.enqueue(waker)
            return false
          }
          // Released meanwhile: take it, unless a cancel has already claimed this await.
          return waker.claim() && state.take(for: holder)
        }
        if tookIt { waker.wake() }
      }
    } catch {
      if let queued { withCriticalSection { $0.remove(queued) } }
      throw error
    }
    if timedOut, let queued { withCriticalSection { $0.remove(queued) } }
    return !timedOut
  }

  /// Gives a permit back, handing it to the first waiter if there is one.
  func release() {
    withCriticalSection { $0.give() }?.wake()
  }
}
