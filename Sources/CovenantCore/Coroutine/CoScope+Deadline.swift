import Dispatch

extension CoScope {
  /// Cancels the scope `delay` from now, unless it is cancelled (or deallocated) before: a
  /// deadline for everything in it.
  ///
  /// ```swift
  /// let scope = CoScope()
  /// scope.cancel(after: .seconds(10))            // give up on the whole batch after 10 s
  /// for url in urls {
  ///   queue.startCoroutine(in: scope) { try store(download(url).await()) }
  /// }
  /// ```
  ///
  /// The timer is `scheduler`'s (`CoroutineScheduler.scheduleTask(after:_:)`): by default, when
  /// called from a coroutine, the scheduler that coroutine runs on (so on CovenantTesting's
  /// `TestScheduler` a deadline is virtual time), and elsewhere Covenant's own timers. It holds
  /// the scope weakly and is cancelled when the scope completes, so an abandoned deadline keeps
  /// nothing alive. Calling this again adds another deadline; the earliest wins. A negative
  /// delay counts as zero; `.never` sets no deadline.
  public func cancel(
    after delay: DispatchTimeInterval, on scheduler: (any CoroutineScheduler)? = nil
  ) {
    let task: () -> Void = { [weak self] in self?.cancel() }
    let timer: any CoroutineTimer
    if let scheduler = scheduler ?? CoroutineContext.current?.scheduler {
      timer = scheduler.scheduleTask(after: delay, task)
    } else {
      timer = DispatchTimer.schedule(after: delay, on: .global(), task)
    }
    whenComplete { timer.cancel() }
  }
}

extension CoScope {
  /// `cancel(after:on:)` with a `Duration`: cancels the scope `delay` from now, unless it is
  /// cancelled (or deallocated) before.
  ///
  /// ```swift
  /// let perPage: Duration = .milliseconds(300)
  /// scope.cancel(after: perPage * urls.count)     // one deadline for the whole batch
  /// ```
  ///
  /// As the `DispatchTimeInterval` form: the timer is `scheduler`'s (by default, from a
  /// coroutine, its scheduler's: virtual time on CovenantTesting's `TestScheduler`), holds the
  /// scope weakly and goes when the scope completes; a negative delay counts as zero; the
  /// earliest of several deadlines wins. Disfavoured against that form, so that
  /// `cancel(after: .seconds(10))` keeps meaning what it meant.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @_disfavoredOverload
  public func cancel(after delay: Duration, on scheduler: (any CoroutineScheduler)? = nil) {
    cancel(after: delay.dispatchTimeInterval, on: scheduler)
  }
}
