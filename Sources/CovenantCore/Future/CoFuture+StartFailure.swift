/// A future is what the coroutine started to complete it tells when that coroutine cannot run.
extension CoFuture: CoroutineStartFailureReceiver {
  @usableFromInline func coroutineFailedToStart(_ error: any Error) { resolve(.failure(error)) }
  /// Nobody can complete it any more: it fails as a cancelled future.
  @usableFromInline func coroutineDroppedUnrun() { resolve(.failure(CoFutureError.canceled)) }
}
