/// Outcomes a derived receiver took from upstream but could not hand over: the element a
/// `receiveFuture` future received in the instant it was cancelled. Every receive of the derived
/// receiver takes these first, so that a cancelled future gives up its turn without losing an
/// element, as a channel's own `receiveFuture` does.
///
/// Empty nearly always: the receive paths check it with one relaxed load (a keep racing with
/// that load is seen by the next receive, as if it had come a moment later).
@usableFromInline
final class UndeliveredOutcomes<Element>: @unchecked Sendable {
  // `@unchecked Sendable`: the outcomes are inside the mutex; `count` is atomic.
  @usableFromInline let count = InlineAtomic<Int>(0)
  private let outcomes = InlineMutex<[Result<Element, CoChannelError>]>([])

  @inlinable init() {}

  /// Whether nothing is kept (a hint: see above).
  @inlinable var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

  /// The number of elements kept.
  var elementCount: Int { count.load(ordering: .relaxed) }

  /// The oldest outcome kept, taken out; `nil` if there is none.
  @usableFromInline func take() -> Result<Element, CoChannelError>? {
    outcomes.withCriticalSection { outcomes -> Result<Element, CoChannelError>? in
      guard !outcomes.isEmpty else { return nil }
      count.store(outcomes.count - 1, ordering: .relaxed)
      return outcomes.removeFirst()
    }
  }

  /// Keeps `outcome` for the next receive.
  func keep(_ outcome: Result<Element, CoChannelError>) {
    outcomes.withCriticalSection { outcomes in
      outcomes.append(outcome)
      count.store(outcomes.count, ordering: .relaxed)
    }
  }

  /// Drops everything kept (the receiver was cancelled), releasing it outside the lock.
  func removeAll() {
    guard !isEmpty else { return }
    let dropped = outcomes.withCriticalSection { outcomes in
      count.store(0, ordering: .relaxed)
      defer { outcomes = [] }
      return UncheckedSendable(outcomes)
    }
    _ = dropped
  }
}

extension CoPromise {
  /// Completes a derived receiver's future with `outcome`; an element the future can no longer
  /// take (it was cancelled meanwhile) is kept in `undelivered` for the next receive.
  func complete(
    with outcome: Result<Value, CoChannelError>, keepingIn undelivered: UndeliveredOutcomes<Value>
  ) {
    if !resolve(outcome.mapError { $0 }), case .success = outcome { undelivered.keep(outcome) }
  }
}
