extension CoroutineScheduler {
  /// Starts an actor (coobjc's `co_actor`): a coroutine on this scheduler that owns its state
  /// and processes the messages of its mailbox channel one at a time, in the order they
  /// arrived. Returns the mailbox's send side.
  ///
  /// ```swift
  /// enum CounterMessage {
  ///   case increment
  ///   case get(CoPromise<Int>)
  /// }
  ///
  /// let counter = DispatchQueue.global().actor(of: CounterMessage.self) { mailbox in
  ///   var count = 0                                  // owned by the actor: no lock needed
  ///   for message in mailbox.makeIterator() {
  ///     switch message {
  ///     case .increment: count += 1
  ///     case .get(let reply): reply.success(count)
  ///     }
  ///   }
  /// }
  ///
  /// DispatchQueue.concurrentPerform(iterations: 100_000) { _ in counter.offer(.increment) }
  /// let total = try counter.ask { .get($0) }.await()  // 100_000 (inside a coroutine)
  /// counter.close()
  /// ```
  ///
  /// - Sending: `offer(_:)` from anywhere (never waits with the default `.unlimited` mailbox),
  ///   `awaitSend(_:)` from a coroutine (waits while a bounded mailbox is full).
  /// - Request-reply: put a `CoPromise` in the message and let the actor complete it;
  ///   `Sender.ask(_:)` does that in one call and returns the reply as a `CoFuture`.
  /// - Ending: `close()` on the sender lets the actor process everything already sent, then
  ///   its loop over the mailbox ends; `cancel()` ends it at once (buffered messages are
  ///   dropped, and an `await` in progress in the actor throws `CoroutineError.canceled`).
  ///   A body that returns or throws on its own ends the actor too: the mailbox is then
  ///   cancelled, so later sends fail instead of piling up. Keep the sender and close it when
  ///   done: an actor whose mailbox is never closed waits for messages forever.
  ///
  /// - Parameters:
  ///   - type: the message type (inferred when the body spells it).
  ///   - bufferType: the mailbox's buffer; `.unlimited` by default, so senders never wait.
  ///   - body: the actor's loop; it gets the mailbox's receive side.
  @discardableResult
  public func actor<T>(
    of type: T.Type = T.self,
    bufferType: CoChannel<T>.BufferType = .unlimited,
    body: @escaping @Sendable (CoChannel<T>.Receiver) throws -> Void
  ) -> CoChannel<T>.Sender {
    let mailbox = CoChannel<T>(bufferType: bufferType)
    let scope = CoScope()
    // Cancelling the mailbox cancels the coroutine, so an await in a message handler ends too.
    // The callback keeps the scope alive as long as the mailbox.
    mailbox.whenCanceled { scope.cancel() }
    startCoroutine(in: scope) {
      defer {
        // Ended on its own (returned or threw), or after close and drain: in the first case
        // nobody will receive any more, so make sends fail rather than pile up.
        if !(mailbox.isClosed && mailbox.isEmpty) { mailbox.cancel() }
      }
      try body(mailbox.receiver)
    }
    return mailbox.sender
  }
}
