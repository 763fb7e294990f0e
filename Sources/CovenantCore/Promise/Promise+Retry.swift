import Dispatch

/// Runs `work` on `queue` and returns a promise of its outcome, running it again after a
/// failure while attempts remain.
///
/// After each failed run (a rejected promise or a throw), if `n > 0` attempts remain,
/// `condition(n, error)` — when given, on `queue` — decides whether to try again after `delay`
/// seconds; so `attempts: 3` asks with 3, 2, then 1. With no attempts left, or when `condition`
/// says no, the promise is rejected with the last error. `work` runs at most `attempts + 1`
/// times. Negative `attempts` and `delay` are treated as 0.
///
/// Unlike google/promises, whose first run happens inline on the calling thread, every run
/// happens on `queue`, like every other promise block.
///
/// ```swift
/// retry(attempts: 3, delay: 0.5, condition: { _, error in error is URLError }) {
///   fetchUser(id)
/// }.then { show($0) }
/// ```
@discardableResult
public func retry<Value>(
  on queue: DispatchQueue = .promises,
  attempts count: Int = 1,
  delay interval: TimeInterval = 1,
  condition predicate: (@Sendable (_ remainingAttempts: Int, _ error: any Error) -> Bool)? = nil,
  _ work: @escaping @Sendable () throws -> Promise<Value>
) -> Promise<Value> {
  let retrier = Retrier(
    queue: queue, interval: max(0, interval), predicate: predicate, work: work,
    promise: Promise<Value>())
  PromiseDispatch.async(on: queue) { retrier.attempt(remaining: max(0, count)) }
  return retrier.promise
}

/// One `retry` in progress. Held only by the pending run's observer or timer, so it (and its
/// promise) is released once resolved, or when nothing could resolve it any more.
private struct Retrier<Value> {
  let queue: DispatchQueue
  let interval: TimeInterval
  let predicate: (@Sendable (Int, any Error) -> Bool)?
  let work: @Sendable () throws -> Promise<Value>
  let promise: Promise<Value>

  /// Runs `work` once (on `queue`) and decides what follows from its outcome.
  func attempt(remaining: Int) {
    let run: Promise<Value>
    do { run = try work() } catch { run = Promise(result: .failure(error)) }
    run.observe(on: queue) { outcome in
      switch outcome {
      case .success(let value):
        promise.fulfill(value)
      case .failure(let error):
        guard remaining > 0, predicate?(remaining, error) ?? true else {
          promise.reject(error)
          return
        }
        PromiseDispatch.asyncAfter(interval, on: queue) { attempt(remaining: remaining - 1) }
      }
    }
  }
}
