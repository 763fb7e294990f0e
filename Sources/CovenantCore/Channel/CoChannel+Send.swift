extension CoChannel {
  /// Sends `element`, suspending the calling coroutine while the channel cannot take it (a
  /// full buffer, or no receiver of a rendezvous channel). Returns at once, even outside a
  /// coroutine, when it can.
  ///
  /// Senders that have to wait are served in FIFO order.
  /// - Throws: `CoChannelError.closed` / `.canceled` when the channel is (or becomes, while
  ///   waiting, for `.canceled`) closed or cancelled; `CoroutineError.canceled` if the
  ///   coroutine is cancelled while waiting (the element is not sent);
  ///   `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a coroutine.
  @inlinable
  public func awaitSend(_ element: Element) throws {
    if let outcome = locked({ state, effects in state.sendNow(element, &effects) }) {
      return try outcome.get()
    }
    let coroutine = try CoroutineHandle.current()
    while true {
      var waiter: ChannelWaiter<Element>?
      do {
        try coroutine.suspend { waker in
          let current = makeWaiter(waker, element: element)
          waiter = current
          let wakeSelf = locked { state, effects -> Bool in
            guard state.isSendReady else {
              state.senders.append(.waiter(current))
              return false
            }
            // Ready after all: complete it ourselves, but only if a cancel has not won.
            guard waker.claim() else { return false }
            if let outcome = state.sendNow(element, &effects) {
              if case .failure(let error) = outcome { current.error = error }
              current.isDone = true
            }  // else every waiting receiver was stale: go round again
            return true
          }
          if wakeSelf { waker.wake() }
        }
      } catch {
        if let waiter {
          locked { state, effects in state.remove(waiter, &effects) }
          recycle(waiter)
        }
        throw error
      }
      guard let waiter else { continue }
      let (isDone, error) = (waiter.isDone, waiter.error)
      recycle(waiter)
      if isDone {
        if let error { throw error }
        return
      }
    }
  }

  /// Sends `element` if that is possible without waiting.
  ///
  /// - Returns: `true` if the element was handed to a receiver or buffered; `false` if the
  ///   buffer is full (or, for `.none`, no receiver waits), or the channel is closed or
  ///   cancelled.
  @inlinable @discardableResult
  public func offer(_ element: Element) -> Bool {
    let outcome = locked { state, effects in state.sendNow(element, &effects) }
    if case .success = outcome { return true }
    return false
  }

  /// Sends `future`'s value when it succeeds, without suspending anyone: it goes to a waiting
  /// receiver or the buffer, or, if there is no room, waits in line with suspended senders.
  /// A failed future sends nothing; a value arriving after the channel is closed or cancelled
  /// is dropped.
  public func sendFuture(_ future: CoFuture<Element>) {
    future.whenResolved { [weak self] result in
      guard let self, case .success(let element) = result else { return }
      self.locked { state, effects in
        if state.sendNow(element, &effects) == nil { state.enqueueElement(element) }
      }
    }
  }
}
