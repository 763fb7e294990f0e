/// What a stage's own coroutine (a pump) got from one of the receivers it reads: an outcome of
/// one of several receivers of one type (`first`, with its index), or of one receiver of
/// another type (`second`).
@usableFromInline
enum PumpEvent<First, Second> {
  case first(Int, Result<First, CoChannelError>)
  case second(Result<Second, CoChannelError>)
}

/// For a pump: the next outcome of any of `many` and `other`, taking turns fairly.
///
/// The receivers are tried in a rotation of their slots — `many`'s indices, then `other` at
/// slot `many.count` — starting at slot `start` (modulo the slot count): first by polling, so
/// that an element that is ready costs no wait and no allocation, then, if none is, by
/// waiting on all of them in one `select`.
///
/// - Precondition: at least one receiver (`many` not empty, or `other` given).
@inlinable
func nextEvent<First, Second>(
  from many: [CoChannel<First>.Receiver], and other: CoChannel<Second>.Receiver?,
  startingAt start: Int
) throws -> PumpEvent<First, Second> {
  let slots = many.count + (other == nil ? 0 : 1)
  let first = slots == 0 ? 0 : start % slots
  for offset in 0..<slots {
    let slot = (first + offset) % slots
    if slot < many.count {
      if let outcome = many[slot].receiveNow() { return .first(slot, outcome) }
    } else if let other, let outcome = other.receiveNow() {
      return .second(outcome)
    }
  }
  return try CoChannel<Never>.select { select in
    for offset in 0..<slots {
      let slot = (first + offset) % slots
      if slot < many.count {
        select.onReceiveResult(many[slot]) { .first(slot, $0) }
      } else {
        select.onReceiveResult(other) { .second($0) }
      }
    }
  }
}

/// A receiver of nothing, for `nextEvent` without `other`.
@usableFromInline
let noReceiver: CoChannel<Never>.Receiver? = nil
