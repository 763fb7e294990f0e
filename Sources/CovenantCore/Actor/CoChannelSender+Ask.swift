extension CoChannel.Sender {
  /// Request-reply with an actor: sends the message `makeMessage` builds around a fresh
  /// `CoPromise`, and returns that promise's future — the actor's answer.
  ///
  /// ```swift
  /// enum AccountMessage {
  ///   case deposit(Int)
  ///   case balance(CoPromise<Int>)
  /// }
  /// let balance = try account.ask { .balance($0) }.await()        // inside a coroutine
  /// let later: CoFuture<Int> = account.ask(AccountMessage.balance) // anywhere
  /// ```
  ///
  /// The message is sent with `offer` when the mailbox has room; otherwise, inside a
  /// coroutine, with `awaitSend` (waiting for room), and outside one it waits in line without
  /// blocking (as `sendFuture` does). If the mailbox is closed or cancelled, the future fails
  /// with `CoChannelError.closed` / `.canceled`.
  ///
  /// The future completes when the actor completes the promise. An actor that drops the
  /// message without answering leaves it pending: use `await(timeout:)` where that can happen.
  public func ask<Reply>(_ makeMessage: (CoPromise<Reply>) -> Element) -> CoFuture<Reply> {
    let reply = CoPromise<Reply>()
    let message = makeMessage(reply)
    if offer(message) { return reply }
    if isClosed {
      reply.fail(isCanceled ? CoChannelError.canceled : CoChannelError.closed)
    } else if Coroutine.isInsideCoroutine {
      do { try awaitSend(message) } catch { reply.fail(error) }
    } else {
      sendFuture(CoFuture(result: .success(message)))
    }
    return reply
  }
}
