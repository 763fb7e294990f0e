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
    let send = SendOperation(element)
    if let outcome = performNow(send) { return try outcome.get() }
    try wait(for: send).get()
  }

  /// Sends `element` if that is possible without waiting.
  ///
  /// - Returns: `true` if the element was handed to a receiver or buffered; `false` if the
  ///   buffer is full (or, for `.none`, no receiver waits), or the channel is closed or
  ///   cancelled.
  @inlinable @discardableResult
  public func offer(_ element: Element) -> Bool {
    if case .success = performNow(SendOperation(element)) { return true }
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
