/// What a scheduled generator's consumers and its body share: the channel of requests and the
/// end of the sequence.
///
/// Built on the channel and future machinery, with no wait protocol of its own: a consumer's
/// `next()` sends a request — a `CoPromise` for the element — on an unlimited channel (so asking
/// never waits) and awaits that promise; the body's `yield` receives a request, evaluates its
/// element and fulfils the promise. So the body, once a value is taken, runs on to its next
/// `yield` and waits there for the next request (coobjc's "one ahead"), and many consumers are
/// served in the order they asked.
///
/// Threading: `requests`, `ended` and `end` are thread-safe; `heldRequest` belongs to the body
/// (one coroutine, whose slices its scheduler orders).
final class ScheduledGeneratorCore<Element>: CoroutineStartFailureReceiver, @unchecked Sendable {
  /// The consumers' requests, oldest first. Closed once the body has ended.
  let requests = CoChannel<CoPromise<Element>>(bufferType: .unlimited)
  /// Completed once the body's coroutine has finished (or could not run), after the body and
  /// its captures were released: what `join()` waits for.
  let ended = CoPromise<Void>()
  let end = InlineMutex(End())
  /// A request the body took for a `yield` whose element could not be had (its expression
  /// threw, its future failed): it is served by the body's next `yield`, or failed at the end.
  var heldRequest: CoPromise<Element>?

  struct End {
    /// Whether the body has ended; `failure` and `canceled` are final from then on.
    var isFinished = false
    /// The error the body ended with (`CoroutineError.canceled` for a cancelled generator).
    var failure: (any Error)?
    /// Whether a consumer has been given `failure` already.
    var failureDelivered = false
    /// Whether the body ended because its coroutine was cancelled.
    var canceled = false
  }

  init() {}

  // MARK: Body side

  /// The body's `yield`: waits for a request, evaluates the element, hands it over. Returns
  /// once a consumer that still waits has it.
  ///
  /// - Throws: `CoroutineError.canceled` when the generator is cancelled; what `produce`
  ///   throws (the request then waits for the next `yield`).
  func deliver(_ produce: () throws -> Element) throws {
    var request = try takeRequest()
    let element: Element
    do {
      element = try produce()
    } catch {
      heldRequest = request
      throw error
    }
    // A consumer that gave up meanwhile (its coroutine was cancelled) cancelled its request:
    // the element goes to the next one.
    while !request.resolve(.success(element)) {
      request = try takeRequest()
    }
  }

  /// The oldest request whose consumer still waits.
  private func takeRequest() throws -> CoPromise<Element> {
    if let held = heldRequest.take(), held.result == nil { return held }
    while true {
      let request = try requests.awaitReceive()
      if request.result == nil { return request }
    }
  }

  /// The body has ended (on its coroutine, or where it could not start): records how, then
  /// ends every request, present and future.
  func finish(failure: (any Error)?, canceled: Bool) {
    end.withCriticalSection { end in
      end.isFinished = true
      end.canceled = canceled
      end.failure = canceled ? CoroutineError.canceled : failure
    }
    requests.close()
    heldRequest.take()?.resolve(.failure(GeneratorEnded()))
    while let request = requests.poll() { request.resolve(.failure(GeneratorEnded())) }
  }

  /// No stack, or cancelled before the body started (the coroutine then never runs it).
  func coroutineFailedToStart(_ error: any Error) {
    finish(failure: error, canceled: error.isCancellation)
  }
  func coroutineDroppedUnrun() { finish(failure: nil, canceled: true) }

  // MARK: Consumer side

  /// The next element, waiting for the body (suspending the calling coroutine, or blocking the
  /// thread outside one); `nil` at the end, or (if `throwingFailure`) the body's error, once.
  func next(throwingFailure: Bool) throws -> Element? {
    let request = CoPromise<Element>()
    guard requests.offer(request) else { return try endOfSequence(throwingFailure) }
    do {
      if Coroutine.isInsideCoroutine {
        // The request is this consumer's own: a cancelled consumer withdraws it.
        do {
          return try request.await(cancellingOnCancel: true)
        } catch let error where error.isCancellation {
          // The body handed the element over before the withdrawal (the coroutine was
          // cancelled, but had not run yet to withdraw): it is this consumer's, not lost.
          if case .success(let element)? = request.result { return element }
          throw error
        }
      }
      try request.join()  // blocks this thread until the body answers or ends
      return try request.result!.get()
    } catch is GeneratorEnded {
      return try endOfSequence(throwingFailure)
    }
  }

  /// `nil`, or the body's error to the first consumer that reaches the end throwing.
  private func endOfSequence(_ throwingFailure: Bool) throws -> Element? {
    guard throwingFailure else { return nil }
    let failure = end.withCriticalSection { end -> (any Error)? in
      guard !end.failureDelivered, let failure = end.failure else { return nil }
      end.failureDelivered = true
      return failure
    }
    if let failure { throw failure }
    return nil
  }
}

/// What a request is failed with once the body has ended: the consumer turns it into the end
/// of the sequence (never seen outside).
struct GeneratorEnded: Error {}
