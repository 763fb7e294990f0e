/// The observers a future's resolution hands back, to be told outside the caller's locks.
@usableFromInline
struct ObserverList<Value>: @unchecked Sendable {
  @usableFromInline let chain: UInt
  @usableFromInline let future: CoFuture<Value>

  @inlinable init(chain: UInt, future: CoFuture<Value>) {
    self.chain = chain
    self.future = future
  }

  @inlinable var isEmpty: Bool { chain == 0 }

  /// Tells every observer, in order, that the future resolved (with `result`, which names the
  /// outcome at the call site; the observers read it from the future).
  @inlinable func notify(_ result: Result<Value, any Error>) {
    future.cell.notify(chain, owner: future)
  }
}
