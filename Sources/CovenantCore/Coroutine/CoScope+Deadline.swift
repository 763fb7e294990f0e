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
