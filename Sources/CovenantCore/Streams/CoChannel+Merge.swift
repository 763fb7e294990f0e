extension CoChannel {
  /// A receiver of the elements of all `receivers`, as each arrives (swift-async-algorithms'
  /// `merge`, Kotlin Flow's `merge`).
  ///
  /// ```swift
  /// let events = CoChannel.merge(clicks.receiver, keys.receiver, timers.receiver)
  /// ```
  ///
  /// - **Order.** Each receiver's elements keep their order; receivers with elements ready take
  ///   turns.
  /// - **Ends** (as swift-async-algorithms' `merge`): once every receiver has closed. If one
  ///   ends otherwise (cancelled, `.timeout`), the merged stream fails with that error at once
  ///   and the other receivers are cancelled.
  /// - **Runs** in a coroutine of its own (see the Streams article), which polls the receivers
  ///   and waits on all of them with one `select` when none is ready; it hands each element
  ///   over before taking the next. Cancelling the merged receiver cancels all `receivers`.
  @inlinable
  public static func merge(_ first: Receiver, _ second: Receiver, _ others: Receiver...)
    -> Receiver
  {
    merge([first, second] + others)
  }

  /// A receiver of the elements of all `receivers`, as each arrives; see
  /// `merge(_:_:_:)`. An empty array gives a receiver that is closed at once.
  @inlinable
  public static func merge(_ receivers: [Receiver]) -> Receiver {
    Receiver(pumpNamed: "Covenant.merge", consuming: receivers) { outlet in
      var live = PumpInputs<Element, Never>(receivers)
      var start = 0
      while !live.isEmpty {
        switch try nextEvent(from: live, and: noReceiver, startingAt: start) {
        case .first(let index, .success(let element)):
          start = index + 1
          try outlet.send(element)
        case .first(let index, .failure(.closed)):
          live.remove(at: index)
          start = index
        case .first(_, .failure(let error)): throw error
        case .second: continue
        }
      }
    }
  }
}
