/// The cases a `select` kept, in the order they were added.
///
/// They live in memory the select allocated on its own stack (`CoChannel.select` passes room
/// for `inlineCapacity` of them); a select with more cases moves them to the heap. The select
/// owns them: every slot stored here is discarded exactly once, by `discardAll()`.
@usableFromInline
struct SelectSlots<Output> {
  @usableFromInline typealias Slot = SelectSlot<Output>
  /// Room on the select's stack, in slots.
  @usableFromInline static var inlineCapacity: Int { 4 }

  @usableFromInline var base: UnsafeMutablePointer<Slot>
  @usableFromInline var capacity: Int
  @usableFromInline var count = 0
  /// Whether `base` was allocated here (after outgrowing the stack room), to be freed here.
  @usableFromInline var ownsBase = false

  @inlinable init(room: UnsafeMutableBufferPointer<Slot>) {
    base = room.baseAddress.unsafelyUnwrapped
    capacity = room.count
  }

  @inlinable subscript(index: Int) -> UnsafeMutablePointer<Slot> { base + index }

  /// Room for one more slot, to be initialized by the caller before anything else happens.
  @inlinable mutating func appendUninitialized() -> UnsafeMutablePointer<Slot> {
    if count == capacity { grow() }
    count += 1
    return base + (count - 1)
  }

  @usableFromInline mutating func grow() {
    let larger = UnsafeMutablePointer<Slot>.allocate(capacity: capacity * 2)
    larger.moveInitialize(from: base, count: count)
    if ownsBase { base.deallocate() }
    base = larger
    capacity *= 2
    ownsBase = true
  }

  /// Asks every slot to take `step`, in order.
  @inlinable func forEach(_ step: SelectSlotStep) {
    for index in 0..<count {
      let slot = self[index]
      _ = slot.pointee.step(slot, step)
    }
  }

  /// Discards every slot (releasing what it holds) and frees heap room. Idempotent.
  @inlinable mutating func discardAll() {
    forEach(.discard)
    count = 0
    if ownsBase {
      base.deallocate()
      ownsBase = false
      capacity = 0
    }
  }
}
