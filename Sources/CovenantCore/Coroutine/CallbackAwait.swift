/// A callback-style await (`Coroutine.await { callback in … }`) in one object: the waker the
/// callback resumes, and the slot it leaves its value in. The callback handed out holds it and
/// nothing else, so its closure context is the object itself: one allocation per await.
///
/// The coroutine does not hold it while it waits: when the callback is released without having
/// been called, the await can never be resumed (only cancelled), and `deinit` marks it
/// abandoned so that coroutine snapshots and `expectNoSuspendedCoroutines` report the coroutine
/// as leaked. The delivery that wins the await instead leaves a reference for the coroutine
/// (taken before the wake, given back by `takeValue`), so the value outlives the callback.
///
/// `@unchecked Sendable`: `value` is written once, by the claim winner before its wake, and read
/// by the coroutine after it; the wait-state atomics order the two.
final class CallbackAwait<T>: @unchecked Sendable {
  private let waker: CoroutineWaker
  private var value: T?

  init(_ waker: CoroutineWaker) { self.waker = waker }

  deinit {
    // A no-op if the await was claimed (the callback ran, or a cancel won) or is over.
    waker.coroutine.wait.abandon(waker.generation)
  }

  /// The callback: resumes the await with `value` unless something else already did.
  func deliver(_ value: T) {
    guard waker.claim() else { return }
    self.value = value
    // The coroutine's retain, made before it may run, given back by `takeValue`.
    _ = UnsafeRetainedBits(retaining: self)
    waker.wake()
  }

  /// The delivered value, for the coroutine the delivery woke; gives back the reference the
  /// delivery left.
  static func takeValue(_ pending: Unmanaged<CallbackAwait>) -> T {
    UnsafeRetainedBits(ownedElsewhere: pending).take().value.unsafelyUnwrapped
  }
}
