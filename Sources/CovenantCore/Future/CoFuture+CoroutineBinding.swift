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
    // Weak to both: the callback runs while the coroutine finishes (so it is there), and its
    // node may outlive the coroutine in the future's observer below, which must not keep the
    // coroutine object; the future, once nobody holds it, has nothing left to cancel.
    guard
      let node = coroutine.whenFinished({ [weak self, weak coroutine] in
        if coroutine?.isCanceled == true { self?.cancel() }
      })
    else { return }
    whenResolved { [weak coroutine] _ in _ = coroutine?.removeFinishCallback(node) }
  }
}
