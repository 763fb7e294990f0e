import Dispatch
import Synchronization

/// What `CoMutex` and `CoSemaphore` keep under their lock: the free permits, the coroutines
/// waiting for one (first come, first served), and who holds the mutex.
///
/// Permits are handed over, never left to be grabbed: a released permit goes straight to the
/// first waiter whose await the releaser can claim (under this lock), so a newcomer cannot
/// barge in ahead of the queue, and the permit is never given to a waiter that a cancel or a
/// timeout has already claimed (that waiter is skipped; it takes itself out of the queue when it
/// wakes). Hence `available > 0` only while no live waiter is queued.
///
/// `@unchecked Sendable`: only ever touched inside its mutex.
struct PermitState: @unchecked Sendable {
  /// Free permits.
  var available: Int
  /// Waiting coroutines, FIFO. Each entry keeps its coroutine alive only while it waits: a
  /// waiter that gives up (cancelled, timed out) removes its entry before it goes on.
  var waiters = RingBuffer<CoroutineWaker>()
  /// `CoMutex` only: who holds the permit (`PermitHolder`), 0 when it is free.
  var holder: UInt = 0

  init(available: Int) { self.available = available }

  /// Takes a permit for `holder` if one is free.
  mutating func take(for holder: UInt) -> Bool {
    guard available > 0 else { return false }
    available -= 1
    self.holder = holder
    return true
  }

  /// Gives a permit back: to the first waiter whose await this claims (returned, to be woken
  /// once the lock is released), or to the pool.
  mutating func give() -> CoroutineWaker? {
    while let waiter = waiters.popFirst() {
      guard waiter.claim() else { continue }  // cancelled or timed out: skipped
      holder = PermitHolder.coroutine(waiter.coroutine)
      return waiter
    }
    available += 1
    holder = 0
    return nil
  }

  /// Takes `waiter`'s entry out of the queue, if still there.
  mutating func remove(_ waiter: CoroutineWaker) {
    waiters.removeFirst { $0.coroutine === waiter.coroutine && $0.generation == waiter.generation }
  }
}

/// Who holds a `CoMutex`: the holding coroutine's address, or `outsideCoroutines` for code that
/// locked it outside any coroutine.
enum PermitHolder {
  static let outsideCoroutines: UInt = 1

  static func coroutine(_ coroutine: CoroutineContext) -> UInt {
    UInt(bitPattern: Unmanaged.passUnretained(coroutine).toOpaque())
  }

  /// The holder the calling code would be.
  static var current: UInt {
    CoroutineContext.currentUnmanaged.map { UInt(bitPattern: $0.toOpaque()) } ?? outsideCoroutines
  }
}

extension Mutex where Value == PermitState {
  /// Takes a permit, suspending the current coroutine in the FIFO queue while none is free.
  ///
  /// Returns at once, inside or outside a coroutine (even a cancelled one), when a permit is
  /// free. Returns false if `timeout` expired first, having taken nothing.
  /// - Throws: `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a
  ///   coroutine; `CoroutineError.canceled` if the coroutine is cancelled while waiting (it
  ///   then holds nothing).
  func acquire(timeout: DispatchTimeInterval = .never) throws(CoroutineError) -> Bool {
    let holder = PermitHolder.current
    if withCriticalSection({ $0.take(for: holder) }) { return true }
    guard let coroutine = CoroutineContext.current else { throw .calledOutsideCoroutine }
    var queued: CoroutineWaker?
    let timedOut: Bool
    do {
      timedOut = try coroutine.suspend(timeout: timeout) { waker in
        let tookIt = withCriticalSection { state -> Bool in
          if state.available == 0 {
            state.waiters.append(waker)
            queued = waker
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
