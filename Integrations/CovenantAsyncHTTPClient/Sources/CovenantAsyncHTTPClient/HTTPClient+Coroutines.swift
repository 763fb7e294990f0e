import AsyncHTTPClient
import CovenantCore
import NIOCore

/// AsyncHTTPClient's requests as Covenant awaits: the request belongs to the coroutine that
/// waits for it, and stops — its connection closed — when that coroutine is cancelled, when its
/// scope is, or when the wait times out.
///
/// ```swift
/// import AsyncHTTPClient
/// import CovenantAsyncHTTPClient
///
/// let scope = CoScope()
/// DispatchQueue.global().startCoroutine(in: scope) {
///   let request = try HTTPClient.Request(url: "http://127.0.0.1:8080/status")
///   let response = try HTTPClient.shared.await(request, timeout: .seconds(5))
///   print(response.status, response.body?.readableBytes ?? 0)
/// }
/// scope.cancel()     // the request is cancelled too, not only the coroutine
/// ```
extension HTTPClient {
  /// Sends `request` and returns a future of the whole response (its body collected in memory,
  /// as `execute(request:)` does); cancelling the future cancels the request at once.
  ///
  /// ```swift
  /// let pending = client.executeFuture(request)
  /// scope.add(pending)                            // cancelled with the scope
  /// let response = try pending.await(timeout: .seconds(5), cancelOnTimeout: true)
  /// ```
  ///
  /// A plain `await()` of the future, in a coroutine that gets cancelled, throws
  /// `CoroutineError.canceled` and leaves the request running: use `await(_:timeout:)`, which
  /// cancels it, or add the future to the coroutine's scope.
  ///
  /// - Parameters:
  ///   - request: what to send.
  ///   - deadline: AsyncHTTPClient's own deadline for the whole request, if any (it fails the
  ///     future with `HTTPClientError.deadlineExceeded`).
  /// - Returns: a future that completes with the response (any status code) or fails with
  ///   AsyncHTTPClient's error, or `CoFutureError.canceled` once cancelled.
  public func executeFuture(
    _ request: Request, deadline: NIODeadline? = nil
  ) -> CoFuture<Response> {
    let task = execute(
      request: request, delegate: ResponseAccumulator(request: request), deadline: deadline)
    let promise = CoPromise<Response>()
    promise.whenCanceled { task.cancel() }
    task.futureResult.whenComplete { promise.complete(with: $0) }
    return promise
  }

  /// Inside a coroutine: sends `request` and suspends the coroutine until the whole response
  /// has come, or until `timeout` has passed.
  ///
  /// Whatever ends the wait early cancels the request (its connection is closed): `timeout`,
  /// which throws `CoFutureError.timeout`, or the coroutine's cancellation (by its scope, its
  /// future, …), which throws `CoroutineError.canceled`. The timer is the coroutine's
  /// scheduler's (virtual time on CovenantTesting's `TestScheduler`).
  ///
  /// ```swift
  /// let page = try Coroutine.retry(attempts: 3, backoff: .exponential(initial: .seconds(1))) {
  ///   try client.await(HTTPClient.Request(url: url), timeout: .seconds(10))
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - request: what to send.
  ///   - timeout: how long to wait for the whole response; `nil`, the default, waits as long as
  ///     it takes (AsyncHTTPClient's own timeouts still apply).
  /// - Returns: the response, any status code (a 404 is a response, not an error).
  /// - Throws: AsyncHTTPClient's error; `CoFutureError.timeout`; `CoroutineError.canceled`
  ///   (at once, sending nothing, in a coroutine already cancelled);
  ///   `CoroutineError.calledOutsideCoroutine` outside a coroutine (nothing is sent then).
  public func await(_ request: Request, timeout: Duration? = nil) throws -> Response {
    guard Coroutine.isInsideCoroutine else { throw CoroutineError.calledOutsideCoroutine }
    // As every await of a cancelled coroutine: at once, and nothing is sent.
    if Coroutine.isCanceled { throw CoroutineError.canceled }
    let response = executeFuture(request)
    do {
      if let timeout { return try response.await(timeout: timeout, cancelOnTimeout: true) }
      return try response.await()
    } catch {
      response.cancel()  // cancelled while waiting; after a failure or a timeout, a no-op
      throw error
    }
  }
}
