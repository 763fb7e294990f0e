/// Something a `DeadlineHeap` holds: an object that remembers its own slot in the heap, so that
/// it can be taken out in O(log n) when its timer is cancelled.
package protocol DeadlineHeapEntry: AnyObject {
  /// The entry's slot in the heap that holds it, `nil` while it is in none. Read and written
  /// only by that heap, under whatever lock guards it (implement it as a stored property with
  /// `@exclusivity(unchecked)`: the lock already orders every access).
  var heapIndex: Int? { get set }
}

/// A binary min-heap of timer entries ordered by deadline, then by insertion order (so tasks due
/// at the same time run first come, first served), with removal of any entry.
///
/// The one timer structure of Covenant: the process-wide `TimerQueue` behind dispatch queues'
/// timers and the virtual clock of CovenantTesting's `TestScheduler` both keep their pending
/// timers in one. Removal is what lets a cancelled timer go at once (with whatever its task
/// holds), instead of staying queued until its deadline.
///
/// The keys live in the heap's own array, next to the entries, so ordering never touches the
/// entry objects; only their `heapIndex` is updated as they move. The array holds each entry
/// with one retain, taken on insertion and given back on removal, so moving entries around
/// costs no reference counting.
///
/// Not thread-safe: the owner guards it with a lock.
package struct DeadlineHeap<Entry: DeadlineHeapEntry> {
  private struct Slot {
    let deadline: UInt64
    let sequence: UInt64
    /// Retained once by the heap (see above).
    let entry: UnsafeRetainedBits<Entry>

    /// Sets the entry's recorded slot.
    @inline(__always)
    func place(at index: Int?) { entry.borrow { $0.heapIndex = index } }

    @inline(__always)
    func precedes(_ other: Slot) -> Bool {
      deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
    }
  }

  private var slots: [Slot] = []
  private var nextSequence: UInt64 = 0

  package init() {}

  /// The number of entries.
  package var count: Int { slots.count }

  /// The earliest deadline, if any.
  package var firstDeadline: UInt64? { slots.first?.deadline }

  /// Adds `entry` (which must not be in a heap) with `deadline`; it goes after every entry
  /// already present with the same deadline.
  package mutating func insert(_ entry: Entry, deadline: UInt64) {
    precondition(entry.heapIndex == nil, "a timer entry was armed twice")
    slots.append(
      Slot(deadline: deadline, sequence: nextSequence, entry: UnsafeRetainedBits(retaining: entry)))
    nextSequence &+= 1
    siftUp(from: slots.count - 1)
  }

  /// Takes `entry` out of the heap; false if it was not in it (it has fired or was removed).
  @discardableResult
  package mutating func remove(_ entry: Entry) -> Bool {
    guard let index = entry.heapIndex else { return false }
    assert(
      slots[index].entry.unmanaged.toOpaque() == Unmanaged.passUnretained(entry).toOpaque(),
      "a timer entry's recorded heap slot is stale")
    removeSlot(at: index).release()
    return true
  }

  /// Takes out and returns the first entry, with its deadline, if that is `time` or earlier.
  package mutating func popFirst(dueBy time: UInt64) -> (entry: Entry, deadline: UInt64)? {
    guard let first = slots.first, first.deadline <= time else { return nil }
    return (removeSlot(at: 0).take(), first.deadline)
  }

  /// Takes the slot at `index` out, restoring the heap order; returns its entry, still with
  /// the heap's retain.
  private mutating func removeSlot(at index: Int) -> UnsafeRetainedBits<Entry> {
    let removed = slots[index]
    removed.place(at: nil)
    let last = slots.removeLast()
    if index < slots.count {
      slots[index] = last
      last.place(at: index)
      siftDown(from: index)
      siftUp(from: last.entry.borrow { $0.heapIndex! })
    }
    return removed.entry
  }

  /// Moves the slot at `start` up to its place, writing each moved entry's index once.
  private mutating func siftUp(from start: Int) {
    slots.withUnsafeMutableBufferPointer { slots in
      let moving = slots[start]
      var child = start
      while child > 0 {
        let parent = (child - 1) / 2
        guard moving.precedes(slots[parent]) else { break }
        slots[child] = slots[parent]
        slots[child].place(at: child)
        child = parent
      }
      slots[child] = moving
      moving.place(at: child)
    }
  }

  /// Moves the slot at `start` down to its place, writing each moved entry's index once.
  private mutating func siftDown(from start: Int) {
    slots.withUnsafeMutableBufferPointer { slots in
      let moving = slots[start]
      var parent = start
      while true {
        let left = 2 * parent + 1
        guard left < slots.count else { break }
        let right = left + 1
        let smaller = right < slots.count && slots[right].precedes(slots[left]) ? right : left
        guard slots[smaller].precedes(moving) else { break }
        slots[parent] = slots[smaller]
        slots[parent].place(at: parent)
        parent = smaller
      }
      slots[parent] = moving
      moving.place(at: parent)
    }
  }

  /// Takes out every entry (for an owner that goes away with timers still pending), handing
  /// back the heap's retains.
  package mutating func removeAll() -> [Entry] {
    defer { slots = [] }
    return slots.map { slot in
      slot.place(at: nil)
      return slot.entry.take()
    }
  }
}
