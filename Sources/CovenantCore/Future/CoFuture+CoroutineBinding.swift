extension CoFuture {
  /// Ties the future to the coroutine that calls this, if any: should that coroutine be
  /// cancelled, the future is cancelled too, when the coroutine ends (its body has returned or
  /// thrown, which a cancelled coroutine does at its next await), unless it completed before.
  ///
  /// For futures that stand for work outside Covenant (a `URLSessionTask`, a request of
  /// another client): `try future.await()` in a coroutine that is cancelled throws
  /// `CoroutineError.canceled` and leaves the future alone, as every await does; this makes the
  /// work stop with the coroutine that asked for it. Nothing is kept once the future completes
  /// (its callback leaves the coroutine's finish callbacks), so a long-lived coroutine may make
  /// any number of them.
  package func cancelWhenCurrentCoroutineIsCanceled() {
    guard let coroutine = CoroutineContext.current else { return }
    // Strong to the coroutine, weak to the future: the coroutine is running (its finish
    // callbacks are dropped once run, or taken out below); the future, once nobody holds it,
    // has nothing left to cancel.
    guard
      let node = coroutine.whenFinished({ [weak self] in
        if coroutine.isCanceled { self?.cancel() }
      })
    else { return }
    whenResolved { [weak coroutine] _ in _ = coroutine?.removeFinishCallback(node) }
  }
}
