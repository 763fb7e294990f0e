/// Where an entry sits in a `DeadlineHeap`: its deadline, its arrival order among entries with
/// the same deadline, and its slot in the heap (`nil` while it is not in one).
package struct DeadlinePosition {
  package var deadline: UInt64 = 0
  package var sequence: UInt64 = 0
  package var index: Int?

  package init() {}

  /// Whether `self` is due before `other`: earlier deadline first, then first come first.
  @inline(__always)
  func precedes(_ other: DeadlinePosition) -> Bool {
    deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
  }
}

/// Something a `DeadlineHeap` holds: an object that remembers its own position, so that it can
/// be taken out of the heap in O(log n) when its timer is cancelled.
package protocol DeadlineHeapEntry: AnyObject {
  /// Read and written only by the heap that holds the entry, under whatever lock guards it.
  var position: DeadlinePosition { get set }
}

/// A binary min-heap of timer entries ordered by deadline, then by insertion order (so tasks due
/// at the same time run first come, first served), with removal of any entry.
///
/// The one timer structure of Covenant: the process-wide `TimerQueue` behind
/// `DispatchQueue`'s timers and the virtual clock of CovenantTesting's `TestScheduler` both
/// keep their pending timers in one. Removal is what lets a cancelled timer go at once (with
/// whatever its task holds), instead of staying queued until its deadline.
///
/// Not thread-safe: the owner guards it with a lock.
package struct DeadlineHeap<Entry: DeadlineHeapEntry> {
  private var entries: [Entry] = []
  private var nextSequence: UInt64 = 0

  package init() {}

  /// The number of entries.
  package var count: Int { entries.count }

  /// The entry due first, if any.
  package var first: Entry? { entries.first }

  /// Adds `entry` (which must not be in a heap) with `deadline`; it goes after every entry
  /// already present with the same deadline.
  package mutating func insert(_ entry: Entry, deadline: UInt64) {
    precondition(entry.position.index == nil, "a timer entry was armed twice")
    entry.position.deadline = deadline
    entry.position.sequence = nextSequence
    nextSequence &+= 1
    entry.position.index = entries.count
    entries.append(entry)
    siftUp(entries.count - 1)
  }

  /// Takes `entry` out of the heap; false if it was not in it (it has fired or was removed).
  @discardableResult
  package mutating func remove(_ entry: Entry) -> Bool {
    guard let index = entry.position.index else { return false }
    assert(entries[index] === entry, "a timer entry's recorded heap slot is stale")
    entry.position.index = nil
    let last = entries.removeLast()
    if index < entries.count {
      entries[index] = last
      last.position.index = index
      siftDown(index)
      siftUp(index)
    }
    return true
  }

  /// Takes out and returns the first entry if its deadline is `time` or earlier.
  package mutating func popFirst(dueBy time: UInt64) -> Entry? {
    guard let first = entries.first, first.position.deadline <= time else { return nil }
    remove(first)
    return first
  }

  /// Takes out every entry, in no particular order.
  package mutating func removeAll() -> [Entry] {
    for entry in entries { entry.position.index = nil }
    defer { entries = [] }
    return entries
  }

  private mutating func siftUp(_ start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard entries[child].position.precedes(entries[parent].position) else { return }
      swapAt(child, parent)
      child = parent
    }
  }

  private mutating func siftDown(_ start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      guard left < entries.count else { return }
      let right = left + 1
      var smallest = left
      if right < entries.count, entries[right].position.precedes(entries[left].position) {
        smallest = right
      }
      guard entries[smallest].position.precedes(entries[parent].position) else { return }
      swapAt(parent, smallest)
      parent = smallest
    }
  }

  private mutating func swapAt(_ i: Int, _ j: Int) {
    entries.swapAt(i, j)
    entries[i].position.index = i
    entries[j].position.index = j
  }
}
