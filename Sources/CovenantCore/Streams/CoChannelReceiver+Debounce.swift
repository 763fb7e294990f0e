extension CoChannel.Receiver {
  /// A receiver of the elements of this one that are followed by a quiet `interval`: each
  /// element waits until `interval` has passed without another arriving, and a newer one
  /// replaces it (swift-async-algorithms' and Kotlin Flow's `debounce`).
  ///
  /// ```swift
  /// let queries = keystrokes.debounce(for: .milliseconds(300))
  /// ```
  ///
  /// - **Ends**: when this receiver closes, after handing over the element waiting, at once
  ///   (as swift-async-algorithms does). When it ends otherwise (cancelled, `.timeout`), with
  ///   that error; the element waiting is dropped.
  /// - **Runs** in a coroutine of its own, on the scheduler of the first coroutine to use the
  ///   result, with that scheduler's timers (virtual time on a `TestScheduler`): an element
  ///   arriving at virtual time *t* is handed over at *t* + `interval` if nothing follows it.
  ///   Elements are timed when the stage takes them, so those buffered upstream before the
  ///   first use count as arriving then. Cancelling the result cancels this receiver.
  @available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
  public func debounce(for interval: Duration) -> CoChannel<Element>.Receiver {
    let upstream = self
    let quiet = interval.dispatchTimeInterval
    return CoChannel<Element>.Receiver(pumpNamed: "Covenant.debounce", consuming: [upstream]) {
      outlet in
      while true {
        guard var waiting = try upstream.nextOrClosed() else { return }
        while true {
          // A newer element replaces the one waiting and starts the quiet interval again.
          let next: Result<Element, CoChannelError>? = try CoChannel<Never>.select { select in
            select.onReceiveResult(upstream) { $0 }
            select.onTimeout(quiet) { nil }
          }
          switch next {
          case nil:
            try outlet.send(waiting)
          case .success(let element)?:
            waiting = element
            continue
          case .failure(.closed)?:
            try outlet.send(waiting)
            return
          case .failure(let error)?: throw error
          }
          break
        }
      }
    }
  }
}
