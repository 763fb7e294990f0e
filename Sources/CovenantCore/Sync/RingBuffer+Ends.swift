/// What `PermitState` needs of a ring beyond a FIFO's operations: its waiters leave tombstones
/// in place (`replace(at:with:)`), and the ones at the back go at once (`last`, `removeLast()`).
extension RingBuffer {
  /// The last element, if any.
  var last: Element? { isEmpty ? nil : element(at: count - 1) }

  /// Replaces the element at `offset` (0: the first).
  mutating func replace(at offset: Int, with element: Element) {
    storage[slot(offset)] = element
  }

  /// Removes and returns the last element, if any.
  mutating func removeLast() -> Element? {
    guard count > 0 else { return nil }
    let index = slot(count - 1)
    let element = storage[index]
    storage[index] = nil
    count -= 1
    if count == 0 { head = 0 }
    return element
  }
}
