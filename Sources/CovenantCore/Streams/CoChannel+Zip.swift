extension CoChannel {
  /// A receiver of pairs of the elements of `first` and `second`, taken one of each, in order
  /// (swift-async-algorithms' `zip`, Kotlin Flow's `zip`).
  ///
  /// ```swift
  /// let labelled = CoChannel.zip(names.receiver, scores.receiver)   // (String, Int) pairs
  /// ```
  ///
  /// - **Ends** (as swift-async-algorithms' `zip`): as soon as either receiver has closed; the
  ///   other one is then cancelled (nothing more will be read from it), and an element of it
  ///   already taken is dropped. If one ends otherwise (cancelled, `.timeout`), the stream
  ///   fails with that error and the other is cancelled.
  /// - **Runs** in a coroutine of its own (see the Streams article), receiving from both at
  ///   once. Cancelling the zipped receiver cancels both.
  @inlinable
  public static func zip<A, B>(_ first: CoChannel<A>.Receiver, _ second: CoChannel<B>.Receiver)
    -> Receiver where Element == (A, B)
  {
    Receiver(pumpNamed: "Covenant.zip", consuming: [first, second]) { outlet in
      let firstOnly = PumpInputs<A, B>([first])
      let none = PumpInputs<A, B>()
      while true {
        var a: A?
        var b: B?
        while a == nil || b == nil {
          switch try nextEvent(
            from: a == nil ? firstOnly : none, and: b == nil ? second : nil,
            startingAt: 0)
          {
          case .first(_, .success(let element)): a = element
          case .second(.success(let element)): b = element
          case .first(_, .failure(.closed)):
            second.cancel()
            return
          case .second(.failure(.closed)):
            first.cancel()
            return
          case .first(_, .failure(let error)), .second(.failure(let error)): throw error
          }
        }
        try outlet.send((a.unsafelyUnwrapped, b.unsafelyUnwrapped))
      }
    }
  }
}
