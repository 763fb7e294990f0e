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
  /// outcome at the call site; the observers read it from the future), through the
  /// `ResolutionDrain` of this stack.
  @inlinable func notify(_ result: Result<Value, any Error>) {
    if chain != 0 { ResolutionDrain.notify(chain, owner: future, leavesPromiseGroup: false) }
  }
}
