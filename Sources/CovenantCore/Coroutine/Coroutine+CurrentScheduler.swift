extension Coroutine {
  /// The scheduler the current coroutine runs on, `nil` outside a coroutine (coobjc's "current
  /// queue").
  ///
  /// It is the scheduler the coroutine was started on, or the one `scheduler.await { … }` has
  /// moved it to while that closure runs. A coroutine of `Coroutine.start` or
  /// `CoFuture(task:)` reports the immediate scheduler those use (it runs tasks at once, on the
  /// calling thread); a scheduled generator's body reports its generator's scheduler; the body
  /// of a lazy ``Generator`` is not a coroutine (`nil`).
  ///
  /// ```swift
  /// queue.startCoroutine {
  ///   let here = Coroutine.currentScheduler!            // `queue`
  ///   let child = here.coroutineFuture { try work() }   // a coroutine beside this one
  /// }
  /// ```
  ///
  /// A `DispatchQueue` comes back as the same object (`===` holds); value-type schedulers as a
  /// copy.
  public static var currentScheduler: (any CoroutineScheduler)? {
    CoroutineContext.current?.scheduler
  }
}
