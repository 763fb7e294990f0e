extension CoScope {
  /// Waits until every coroutine of the scope has ended — returned or thrown — including those
  /// of child scopes and of `coroutineFuture` futures added to it, after a cancellation too.
  /// Inside a coroutine it suspends the coroutine; outside one it blocks the calling thread
  /// (so never call it outside a coroutine on the thread the scope's coroutines need).
  ///
  /// ```swift
  /// scope.cancel()
  /// try scope.join()        // every coroutine of the scope has returned or thrown
  /// ```
  ///
  /// Coroutines started in the scope while it waits are waited for too.
  /// - Throws: `CoroutineError.canceled` if the joining coroutine is cancelled while it waits.
  /// - Precondition: not called from one of the scope's own coroutines (it would wait for
  ///   itself).
  public func join() throws {
    if let current = CoroutineContext.currentUnmanaged {
      precondition(
        !contains(ObjectIdentifier(current.takeUnretainedValue())),
        "CoScope.join() called from a coroutine of the scope would wait for itself")
    }
    repeat {
      try suspendOrBlock(until: { done in whenIdle(done) }, unregister: { removeJoiner($0) })
      for child in liveChildren() { try child.join() }
    } while !isIdle
  }

  /// Cancels the scope, then waits until every coroutine of it has ended (`cancel()` then
  /// `join()`). Called from one of the scope's own coroutines it cancels that coroutine too,
  /// so it throws `CoroutineError.canceled` at once instead of waiting for itself.
  ///
  /// - Throws: `CoroutineError.canceled` if the joining coroutine is cancelled while it waits.
  public func cancelAndJoin() throws {
    cancel()
    if let current = CoroutineContext.currentUnmanaged,
      contains(ObjectIdentifier(current.takeUnretainedValue()))
    {
      throw CoroutineError.canceled
    }
    try join()
  }

  /// The handler of errors thrown out of the bodies of coroutines started in this scope (and
  /// in child scopes without a handler of their own), instead of
  /// `Coroutine.uncaughtErrorHandler`; `nil` (the default) defers to the enclosing scope's,
  /// else to the process-wide one. It runs on the coroutine's thread, right after the body has
  /// thrown.
  ///
  /// ```swift
  /// let scope = CoScope()
  /// scope.uncaughtErrorHandler = { failure in
  ///   log(failure)
  ///   scope.cancel()           // one failure stops the whole pipeline
  /// }
  /// ```
  public var uncaughtErrorHandler: (@Sendable (UncaughtCoroutineError) -> Void)? {
    get { state.withCriticalSection { $0.uncaughtErrorHandler } }
    set { state.withCriticalSection { $0.uncaughtErrorHandler = newValue } }
  }

  /// This scope's handler, else the nearest enclosing scope's.
  var nearestUncaughtErrorHandler: (@Sendable (UncaughtCoroutineError) -> Void)? {
    let (handler, parent) = state.withCriticalSection {
      ($0.uncaughtErrorHandler, $0.parent?.scope)
    }
    return handler ?? parent?.nearestUncaughtErrorHandler
  }

  // MARK: Tracking running coroutines

  /// Adds a coroutine started in the scope (`startCoroutine(in:)`): cancelled with the scope,
  /// waited for by `join()`, its uncaught errors given to the scope's handler.
  @usableFromInline
  func addCoroutine(_ coroutine: CoroutineContext) {
    coroutine.scopeLink = WeakScopeLink(self)
    track(coroutine)
    addCancellable(coroutine)
  }

  /// Counts `coroutine` as running until its body has ended.
  func track(_ coroutine: CoroutineContext) {
    let identity = ObjectIdentifier(coroutine)
    state.withCriticalSection { _ = $0.running.insert(identity) }
    coroutine.whenFinished { [weak self] in self?.ended(identity) }
  }

  private func ended(_ identity: ObjectIdentifier) {
    let joiners = state.withCriticalSection { state -> [CoScope.Joiner] in
      state.running.remove(identity)
      guard state.running.isEmpty else { return [] }
      defer { state.joiners = [] }
      return state.joiners
    }
    for joiner in joiners { joiner.callback() }
  }

  /// Calls `callback` once no coroutine of the scope itself runs (at once if none does).
  /// Returns the key `removeJoiner` takes it back with (`nil` if it was called at once).
  private func whenIdle(_ callback: @escaping @Sendable () -> Void) -> UInt64? {
    let key = state.withCriticalSection { state -> UInt64? in
      if state.running.isEmpty { return nil }
      state.nextKey += 1
      state.joiners.append(Joiner(key: state.nextKey, callback: callback))
      return state.nextKey
    }
    if key == nil { callback() }
    return key
  }

  /// Takes back the callback of a `join()` that gave up (its coroutine was cancelled).
  private func removeJoiner(_ key: UInt64) {
    let removed = state.withCriticalSection { state -> Joiner? in
      state.joiners.firstIndex { $0.key == key }.map { state.joiners.remove(at: $0) }
    }
    withExtendedLifetime(removed) {}  // released here, outside the lock
  }

  /// How many `join()` callbacks wait for the scope's coroutines to end. For tests.
  package var joinerCount: Int { state.withCriticalSection { $0.joiners.count } }

  private var isIdle: Bool { state.withCriticalSection { $0.running.isEmpty } }

  private func contains(_ coroutine: ObjectIdentifier) -> Bool {
    if state.withCriticalSection({ $0.running.contains(coroutine) }) { return true }
    return liveChildren().contains { $0.contains(coroutine) }
  }

  private func liveChildren() -> [CoScope] {
    state.withCriticalSection { state in
      state.children.removeAll { $0.scope == nil }
      return state.children.compactMap { $0.scope }
    }
  }
}
