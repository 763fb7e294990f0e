/// What a coroutine tells, instead of running its body, when it cannot get a stack or its
/// scheduler drops it unrun: the future of `coroutineFuture` and `CoFuture(task:)`, which then
/// fails.
///
/// A protocol rather than a closure: the coroutine keeps the receiver in one word (every
/// coroutine carries the field, and a suspended coroutine's size is what a million of them
/// cost), and starting a future's coroutine allocates no closure context for it.
@usableFromInline
protocol CoroutineStartFailureReceiver: AnyObject {
  /// No stack could be had (`error`: a `CoroutineStartError`).
  func coroutineFailedToStart(_ error: any Error)
  /// The scheduler let the coroutine's task go without running it.
  func coroutineDroppedUnrun()
}
