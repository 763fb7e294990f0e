extension CoroutineScheduler {
  /// Starts a generator whose body is a coroutine on this scheduler (coobjc's
  /// `co_sequence_onqueue`): it may await anything, hands out elements with `try yield(x)`, and
  /// after an element is taken runs on to its next `yield` (see ``ScheduledGenerator``).
  ///
  /// ```swift
  /// let pages = DispatchQueue.global().generator { (yield: ScheduledGenerator<Page>.Yield) in
  ///   var token: String? = nil
  ///   repeat {
  ///     let page = try api.page(after: token).await()
  ///     try yield(page)
  ///     token = page.next
  ///   } while token != nil
  /// }
  /// for page in pages { render(page) }     // suspends in a coroutine, blocks elsewhere
  /// ```
  ///
  /// - Parameters:
  ///   - scope: cancelling this scope (or its deinit) cancels the generator; `scope.join()`
  ///     waits for its body to end.
  ///   - name: what coroutine snapshots and dumps call the body's coroutine.
  ///   - file, line: where the generator is made (filled in by the compiler).
  ///   - body: the producer, run as a coroutine on this scheduler, started at once.
  public func generator<Element>(
    in scope: CoScope? = nil, name: String? = nil, file: StaticString = #fileID,
    line: UInt = #line,
    _ body: @escaping @Sendable (_ yield: ScheduledGenerator<Element>.Yield) throws -> Void
  ) -> ScheduledGenerator<Element> {
    ScheduledGenerator(
      scheduler: self, scope: scope, name: name, file: file, line: line, body: body)
  }
}
