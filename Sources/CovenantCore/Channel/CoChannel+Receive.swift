extension CoChannel {
  /// Receives the next element, suspending the calling coroutine until there is one. Returns
  /// at once, even outside a coroutine, when an element is ready.
  ///
  /// Receivers that have to wait are served in FIFO order.
  /// - Throws: `CoChannelError.closed` once the channel is closed and everything sent before
  ///   has been received; `CoChannelError.canceled` if it is cancelled;
  ///   `CoroutineError.canceled` if the coroutine is cancelled while waiting (nothing is
  ///   consumed); `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a
  ///   coroutine.
  @inlinable
  public func awaitReceive() throws -> Element {
    let receive = ReceiveOperation<Element>()
    if let outcome = performNow(receive) { return try outcome.get() }
    return try wait(for: receive).get()
  }

  /// Receives an element if one is ready, without waiting; `nil` otherwise (also when the
  /// channel is closed and drained, or cancelled).
  @inlinable
  public func poll() -> Element? {
    if case .success(let element) = performNow(ReceiveOperation()) { return element }
    return nil
  }

  /// Calls `callback` with the next element, or with the error that ends receiving
  /// (`.closed` after close and drain, `.canceled`). The callback takes its turn among
  /// waiting receivers; it runs on the thread that delivers the element (at once if one is
  /// ready).
  public func whenReceive(_ callback: @escaping @Sendable (Result<Element, CoChannelError>) -> Void)
  {
    let ready = locked { state, effects -> Result<Element, CoChannelError>? in
      let outcome = state.receiveNow(&effects)
      if outcome == nil { state.appendReceiver(.callback(callback)) }
      return outcome
    }
    if let ready { callback(ready) }
  }

  /// A future of the next element: it completes with the element, or fails with
  /// `CoChannelError.closed` / `.canceled`. Cancelling the future gives up its turn without
  /// consuming anything.
  public func receiveFuture() -> CoFuture<Element> {
    let future = CoPromise<Element>()
    let ready = locked { state, effects -> Result<Element, CoChannelError>? in
      let outcome = state.receiveNow(&effects)
      if outcome == nil { state.appendReceiver(.future(future)) }
      return outcome
    }
    if let ready {
      future.complete(with: ready.mapError { $0 })
    } else {
      let identity = ObjectIdentifier(future)
      future.whenResolved { [weak self] result in
        if result.isCoFutureCancellation {
          self?.state.withCriticalSection { $0.removeReceiver(future: identity) }
        }
      }
    }
    return future
  }
}
