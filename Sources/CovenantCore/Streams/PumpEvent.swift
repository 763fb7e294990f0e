/// What a stage's own coroutine (a pump) got from one of the receivers it reads: an outcome of
/// one of several receivers of one type (`first`, with its index), or of one receiver of
/// another type (`second`).
@usableFromInline
enum PumpEvent<First, Second> {
  case first(Int, Result<First, CoChannelError>)
  case second(Result<Second, CoChannelError>)
}

/// The receivers of one type a pump reads (`nextEvent`), with a `select` case body for each,
/// made once rather than at every wait: a body knows its receiver's index, and a closure that
/// captures it is an allocation.
@usableFromInline
struct PumpInputs<First, Second> {
  @usableFromInline typealias Body = (Result<First, CoChannelError>) throws -> PumpEvent<
    First, Second
  >

  @usableFromInline private(set) var receivers: [CoChannel<First>.Receiver] = []
  @usableFromInline private(set) var bodies: [Body] = []

  @inlinable init(_ receivers: [CoChannel<First>.Receiver] = []) {
    for receiver in receivers { append(receiver) }
  }

  @inlinable var count: Int { receivers.count }
  @inlinable var isEmpty: Bool { receivers.isEmpty }
  @inlinable subscript(index: Int) -> CoChannel<First>.Receiver { receivers[index] }

  @inlinable mutating func append(_ receiver: CoChannel<First>.Receiver) {
    let index = receivers.count
    receivers.append(receiver)
    bodies.append { .first(index, $0) }
  }

  /// Removes the receiver at `index`; those after it move down one.
  @inlinable mutating func remove(at index: Int) {
    receivers.remove(at: index)
    bodies.removeLast(bodies.count - index)
    for moved in index..<receivers.count { bodies.append { .first(moved, $0) } }
  }

  @inlinable mutating func removeAll() {
    receivers.removeAll()
    bodies.removeAll()
  }
}

/// For a pump: the next outcome of any of `inputs` and `other`, taking turns fairly.
///
/// The receivers are tried in a rotation of their slots — `inputs`' indices, then `other` at
/// slot `inputs.count` — starting at slot `start` (modulo the slot count): first by polling,
/// so that an element that is ready costs no wait and no allocation, then, if none is, by
/// waiting on all of them in one `select` (whose case bodies were made beforehand: no
/// allocation either).
///
/// - Precondition: at least one receiver (`inputs` not empty, or `other` given).
@inlinable
func nextEvent<First, Second>(
  from inputs: PumpInputs<First, Second>, and other: CoChannel<Second>.Receiver?,
  startingAt start: Int
) throws -> PumpEvent<First, Second> {
  let slots = inputs.count + (other == nil ? 0 : 1)
  let first = slots == 0 ? 0 : start % slots
  for offset in 0..<slots {
    let slot = (first + offset) % slots
    if slot < inputs.count {
      if let outcome = inputs[slot].receiveNow() { return .first(slot, outcome) }
    } else if let other, let outcome = other.receiveNow() {
      return .second(outcome)
    }
  }
  return try CoChannel<Never>.select { select in
    for offset in 0..<slots {
      let slot = (first + offset) % slots
      if slot < inputs.count {
        select.onReceiveResult(inputs[slot], inputs.bodies[slot])
      } else {
        select.onReceiveResult(other, PumpEvent.second)
      }
    }
  }
}

/// A receiver of nothing, for `nextEvent` without `other`.
@usableFromInline
let noReceiver: CoChannel<Never>.Receiver? = nil
