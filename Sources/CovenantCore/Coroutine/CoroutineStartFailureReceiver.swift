/// What a coroutine tells, instead of running its body, when it cannot get a stack: the future
/// of `coroutineFuture` and `CoFuture(task:)`, which then fails with the error.
///
/// A protocol rather than a closure: the coroutine keeps the receiver in one word (every
/// coroutine carries the field, and a suspended coroutine's size is what a million of them
/// cost), and starting a future's coroutine allocates no closure context for it.
@usableFromInline
protocol CoroutineStartFailureReceiver: AnyObject {
  func coroutineFailedToStart(_ error: any Error)
}

extension CoFuture: CoroutineStartFailureReceiver {
  @usableFromInline func coroutineFailedToStart(_ error: any Error) { resolve(.failure(error)) }
}
