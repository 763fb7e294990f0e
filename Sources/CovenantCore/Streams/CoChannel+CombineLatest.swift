extension CoChannel {
  /// A receiver of pairs of the latest elements of `first` and `second`: once both have
  /// produced an element, a pair each time either produces one (swift-async-algorithms'
  /// `combineLatest`, Kotlin Flow's `combine`).
  ///
  /// ```swift
  /// let view = CoChannel.combineLatest(user.updates(), settings.updates())
  /// ```
  ///
  /// - **Ends** (as swift-async-algorithms' `combineLatest`): once both receivers have closed;
  ///   or at once if one closes before it has produced any element (no pair can ever be made:
  ///   the other is then cancelled). If one ends otherwise (cancelled, `.timeout`), the stream
  ///   fails with that error and the other is cancelled.
  /// - **Runs** in a coroutine of its own (see the Streams article), receiving from both at
  ///   once, taking turns when both have elements ready. Cancelling the combined receiver
  ///   cancels both.
  @inlinable
  public static func combineLatest<A, B>(
    _ first: CoChannel<A>.Receiver, _ second: CoChannel<B>.Receiver
  ) -> Receiver where Element == (A, B) {
    Receiver(pumpNamed: "Covenant.combineLatest", consuming: [first, second]) { outlet in
      let firstOnly = PumpInputs<A, B>([first])
      let none = PumpInputs<A, B>()
      var latestA: A?
      var latestB: B?
      var firstIsOpen = true
      var secondIsOpen = true
      var start = 0
      while firstIsOpen || secondIsOpen {
        let event = try nextEvent(
          from: firstIsOpen ? firstOnly : none, and: secondIsOpen ? second : nil,
          startingAt: start)
        start += 1
        switch event {
        case .first(_, .success(let element)):
          latestA = element
          if let latestB { try outlet.send((element, latestB)) }
        case .second(.success(let element)):
          latestB = element
          if let latestA { try outlet.send((latestA, element)) }
        case .first(_, .failure(.closed)):
          firstIsOpen = false
          if latestA == nil {
            second.cancel()
            return
          }
        case .second(.failure(.closed)):
          secondIsOpen = false
          if latestB == nil {
            first.cancel()
            return
          }
        case .first(_, .failure(let error)), .second(.failure(let error)): throw error
        }
      }
    }
  }
}
