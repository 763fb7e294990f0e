/// The observers a future's resolution hands back, to be told outside the caller's locks.
@usableFromInline
struct ObserverList<Value>: Sendable {
  /// The chain taken from the future's cell, owned until it is told.
  @usableFromInline let chain: ReactionBits
  @usableFromInline let future: CoFuture<Value>

  @inlinable init(chain: ReactionBits, future: CoFuture<Value>) {
    self.chain = chain
    self.future = future
  }

  @inlinable var isEmpty: Bool { chain.isNone }

  /// Tells every observer, in order, that the future resolved (with `result`, which names the
  /// outcome at the call site; the observers read it from the future), through the
  /// `ResolutionDrain` of this stack.
  @inlinable func notify(_ result: Result<Value, any Error>) {
    if !chain.isNone { ResolutionDrain.notify(chain, owner: future, leavesPromiseGroup: false) }
  }
}
