extension CoChannel.Receiver: AsyncSequence {
  /// Receives a channel's elements in a Swift `async` loop.
  ///
  /// Each `next()` waits, without blocking a thread, for the next element (taking its turn
  /// among the channel's other receivers) and returns `nil` — ending the loop — once the
  /// channel is closed and drained, when it is cancelled, or when the iterating task is
  /// cancelled. Cancelling the task only gives up the task's turn: the channel stays open for
  /// others and no element is lost. It never throws.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let receiver: CoChannel<Element>.Receiver
    var isFinished = false

    #if compiler(>=6.2)
      /// The next element, or `nil` when the iteration is over.
      public mutating func next() async -> Element? { await next(isolation: nil) }

      /// The next element, or `nil` when the iteration is over, waiting in the caller's
      /// isolation (what `for await` calls in Swift 6).
      ///
      /// Declared here rather than inherited, so that `for await x in receiver.prefix(3)`
      /// picks the receiver's own `prefix` (and `map`, `filter`, …) in Swift 6 mode: with the
      /// inherited one, the loop over `AsyncSequence.prefix` ranked as well, and the call was
      /// ambiguous.
      public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
        if isFinished { return nil }
        if let element = receiver.poll() { return element }
        if receiver.isClosed && receiver.isEmpty || Task.isCancelled {
          isFinished = true
          return nil
        }
        do {
          return try await receiver.receiveFuture().get()
        } catch {
          isFinished = true
          return nil
        }
      }
    #else
      /// The next element, or `nil` when the iteration is over.
      public mutating func next() async -> Element? {
        if isFinished { return nil }
        if let element = receiver.poll() { return element }
        if receiver.isClosed && receiver.isEmpty || Task.isCancelled {
          isFinished = true
          return nil
        }
        do {
          return try await receiver.receiveFuture().get()
        } catch {
          isFinished = true
          return nil
        }
      }
    #endif
  }

  /// An iterator for `for await element in receiver { … }`.
  ///
  /// ```swift
  /// let (receiver, sender) = CoChannel<Int>().pair
  /// Task {
  ///   for await value in receiver { print(value) }   // until the channel is closed
  /// }
  /// sender.offer(1); sender.offer(2); sender.close()
  /// ```
  public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(receiver: self) }
}
