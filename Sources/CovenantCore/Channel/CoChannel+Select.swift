extension CoChannel where Element == Never {
  /// Waits for the first of several channel operations to complete, performs exactly that one,
  /// and returns what its body returns (Go's `select`, Kotlin's `select {}`).
  ///
  /// ```swift
  /// let message: String = try CoChannel.select { select in
  ///   select.onReceive(numbers) { number in "number \(number)" }
  ///   select.onReceive(names.receiver) { name in "name \(name)" }
  ///   select.onSend(acks, true) { "acknowledged" }
  ///   select.onDefault { "nothing ready" }          // optional: don't wait
  /// }
  /// ```
  ///
  /// - Cases are tried in the order they are added, as they are added: the first that can
  ///   complete at once is performed (a select whose first case is ready costs one `poll`).
  ///   For a random choice among ready cases, use `selectUnbiased`.
  /// - So a `build` closure that throws after adding a case that completed has already
  ///   performed it: that case's body has run with its element (nothing is lost), and `select`
  ///   rethrows the error of `build`, dropping what the body returned. Throw before adding
  ///   cases, or use `selectUnbiased`, whose `build` performs nothing.
  /// - If none can, with `onDefault` the default body runs; without one, the calling
  ///   coroutine suspends until one case can complete, and that case is performed.
  /// - Exactly one case is performed: the others consume nothing, send nothing, and leave no
  ///   waiter behind in their channels.
  /// - Bodies run on the calling coroutine, with no lock held; an error a body throws is
  ///   rethrown by `select`.
  /// - A receive case on a closed-and-drained or cancelled channel, and a send case on a closed
  ///   or cancelled channel, are always ready: `onReceive` / `onSend` make `select` throw the
  ///   `CoChannelError`, `onReceiveResult` hands it to its body. Leave such a case out (a `nil`
  ///   channel) once you have seen it, or the loop around the select spins on it.
  ///
  /// - Throws: what the chosen body throws; `CoChannelError` as described;
  ///   `CoroutineError.calledOutsideCoroutine` if it would have to wait outside a coroutine;
  ///   `CoroutineError.canceled` if the coroutine is cancelled while waiting (no case is then
  ///   performed).
  /// - Precondition: at least one case is enabled, or there is a default.
  @inlinable
  public static func select<Output>(
    _ build: (inout CoChannelSelector<Output>) throws -> Void
  ) throws -> Output {
    try run(unbiased: false, build)
  }

  /// `select` with a fair choice: when several cases can complete at once, one of them is
  /// picked at random, each with the same chance (Go's `select`, Kotlin's `selectUnbiased`).
  ///
  /// ```swift
  /// // Neither stream can starve the other, however busy it is.
  /// let event: Event = try CoChannel.selectUnbiased { select in
  ///   select.onReceive(results) { .result($0) }
  ///   select.onReceive(ticks) { .tick($0) }
  /// }
  /// ```
  ///
  /// Every case is added before any is tried, so it costs a little more than `select` when an
  /// early case is ready. Otherwise the same as `select`.
  @inlinable
  public static func selectUnbiased<Output>(
    _ build: (inout CoChannelSelector<Output>) throws -> Void
  ) throws -> Output {
    try run(unbiased: true, build)
  }

  @inlinable
  static func run<Output>(
    unbiased: Bool, _ build: (inout CoChannelSelector<Output>) throws -> Void
  ) throws -> Output {
    // The kept cases live on this stack: room for four, more move to the heap.
    try withUnsafeTemporaryAllocation(of: SelectSlot<Output>.self, capacity: 4) { room in
      var selector = CoChannelSelector<Output>(unbiased: unbiased, room: room)
      do { try build(&selector) } catch {
        selector.slots.discardAll()
        throw error
      }
      return try selector.complete()
    }
  }
}
