/// A growable FIFO ring: O(1) `append` and `popFirst`, no allocation once it has grown to its
/// working size. The storage of channel buffers and waiter queues, and of `CoMutex`/`CoSemaphore`
/// waiters.
///
/// A new ring allocates nothing (its storage is the shared empty array); the first append makes
/// 4 slots and each growth doubles them, up to the limit the caller gives (a bounded channel's
/// capacity), so the storage is what the fullest moment needed, not what could ever be needed.
/// It never shrinks: a ring that fills and drains again and again allocates only while it first
/// grows.
@usableFromInline
struct RingBuffer<Element> {
  @usableFromInline var storage: ContiguousArray<Element?> = []
  @usableFromInline var head = 0
  @usableFromInline var count = 0

  /// An empty ring, with no storage yet.
  @inlinable init() {}

  @inlinable var isEmpty: Bool { count == 0 }

  @inlinable var first: Element? { count == 0 ? nil : storage[head] }

  @inlinable var last: Element? { count == 0 ? nil : storage[slot(count - 1)] }

  @inlinable mutating func append(_ element: Element) {
    append(element, growingAtMostTo: .max)
  }

  /// Appends `element`, growing the storage if it is full but never past `limit` slots (the
  /// caller holds fewer than `limit` elements: a bounded channel's buffer, whose capacity is the
  /// limit).
  @inlinable mutating func append(_ element: Element, growingAtMostTo limit: Int) {
    if count == storage.count { grow(upTo: limit) }
    var index = head + count
    if index >= storage.count { index -= storage.count }
    storage[index] = element
    count += 1
  }

  @inlinable mutating func popFirst() -> Element? {
    guard count > 0 else { return nil }
    let element = storage[head]
    storage[head] = nil
    head += 1
    if head == storage.count { head = 0 }
    count -= 1
    return element
  }

  /// Removes the last element (the one appended most recently); `nil` if empty.
  @inlinable @discardableResult
  mutating func popLast() -> Element? {
    guard count > 0 else { return nil }
    let index = slot(count - 1)
    let element = storage[index]
    storage[index] = nil
    count -= 1
    if count == 0 { head = 0 }
    return element
  }

  /// Replaces the element at `offset` (0: the first): how `PermitState` leaves a tombstone in
  /// place of a waiter that gave up.
  @inlinable mutating func replace(at offset: Int, with element: Element) {
    storage[slot(offset)] = element
  }

  /// Removes every element for which `shouldRemove` is true, keeping the others in order, in
  /// one pass: O(count).
  @inlinable
  mutating func removeAll(where shouldRemove: (Element) -> Bool) {
    var kept = 0
    for offset in 0..<count {
      let index = slot(offset)
      let element = storage[index].unsafelyUnwrapped
      storage[index] = nil
      if shouldRemove(element) { continue }
      storage[slot(kept)] = element
      kept += 1
    }
    count = kept
    if count == 0 { head = 0 }
  }

  /// Empties the ring, returning its elements in order (to be released outside a lock).
  @inlinable mutating func removeAll() -> [Element] {
    var all: [Element] = []
    all.reserveCapacity(count)
    while let element = popFirst() { all.append(element) }
    return all
  }

  @inlinable func slot(_ offset: Int) -> Int {
    let index = head + offset
    return index >= storage.count ? index - storage.count : index
  }

  @inlinable func element(at offset: Int) -> Element { storage[slot(offset)]! }

  /// Doubles the storage (at least 4 slots), to `limit` slots at most.
  @inlinable mutating func grow(upTo limit: Int) {
    assert(storage.count < limit, "a ring grows only below its limit")
    let newCapacity = Swift.min(limit, Swift.max(4, storage.count * 2))
    var grown = ContiguousArray<Element?>(repeating: nil, count: newCapacity)
    for offset in 0..<count { grown[offset] = storage[slot(offset)] }
    storage = grown
    head = 0
  }
}
