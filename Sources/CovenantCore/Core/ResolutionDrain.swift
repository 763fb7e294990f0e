import CCoroutineContext
import CCovenantShims
import Dispatch

/// The promise core's trampoline: resolving a promise or future uses the same stack space
/// however many promises adopt or forward its outcome (Architecture.md, "Resolution at any
/// depth").
///
/// A resolution hands the observer chain it took from its cell to `notify`. When no resolution
/// is being told on this stack, that call becomes the *drain*: it tells the chain's reactions
/// one after the other, and the resolutions those reactions make in turn — a promise that
/// adopted the one just resolved, a `map` or `flatMap` future of it, a converted
/// `Promise`/`CoFuture` — do not recurse. Each of those resolves its cell at once (its value is
/// readable, late observers run at once) and tells the reactions of its chain that only
/// dispatch (so `then` blocks keep their registration order), but queues the others here; the
/// loop tells them right after the reaction that resolved them returns, before the next
/// reaction of the chain being told. That is the order a recursive notification had, except
/// that nested synchronous observers run after the observer that completed their future
/// returns, not inside its call — or before it waits, if it does (`tellQueuedBeforeWaiting`).
/// (SwiftNIO's `CallbackList` runs `flatMap` chains from one loop for the same reason.)
///
/// The drain lives in the frame of the outermost resolving call; further resolutions find it
/// through the thread-local slot `ThreadSlot.resolution`. That slot belongs to a stack, not a
/// thread: the fiber layer gives a coroutine's resumer its own value back whenever the
/// coroutine suspends or ends, so a coroutine that suspends inside an observer never leaves
/// its drain installed on the thread it leaves. It finishes that drain when it continues.
///
/// The queue is a stack of chains being told (the top one next), in a few words of the drain's
/// frame, moved to the heap only when more chains are queued at once than fit there: a
/// cascade through a chain of adopting promises keeps one or two queued, at any depth.
@usableFromInline
struct ResolutionDrain {
  /// The stack the drain's frame is on: the fiber running when it was made, `nil` for a
  /// thread's own stack. `tellQueuedBeforeWaiting` compares it with the fiber running then
  /// instead of comparing the drain's address with the fiber's stack: under AddressSanitizer a
  /// frame may live in a "fake stack" on the heap, and the address check then said "another
  /// stack's drain", so an observer's wait hung as before the fix.
  let stack: OpaquePointer?
  /// Queued chains, `count` of them, the next to tell last.
  var entries: UnsafeMutablePointer<QueuedChain>
  var capacity: Int
  var count: Int
  /// Whether `entries` was allocated on the heap (when the frame's part filled up).
  var entriesOnHeap = false
  /// Whether the drain counts in `DispatchGroup.promises` (from its first queued chain to its
  /// end): a resolved promise leaves the group once its own observers have been told, and the
  /// work they queued must keep `waitForPromises` waiting as the recursion used to.
  var holdsPromiseGroup = false
  /// How many chains were queued when the reaction being told was called: the ones above were
  /// queued by that reaction (or by what it told in turn). What `tellQueuedBeforeWaiting` tells.
  var mark = 0

  /// Entries in the outermost resolving call's frame; more go to the heap.
  static let capacityInFrame = 8

  /// Tells the reactions of `head` — a non-empty chain just taken from the resolved cell of
  /// `owner`, a `Promise` or `CoFuture` kept alive by the caller — that the cell is resolved,
  /// in registration order: now, or, when a resolution is being notified on this stack, after
  /// the reaction being told returns. A `Promise` passes `leavesPromiseGroup`: it leaves
  /// `DispatchGroup.promises` once its reactions have been told.
  ///
  /// A chain of one reaction that only dispatches itself (a `then` step, a coroutine awaiting
  /// on a dispatch queue: the common case) is told at once, without a drain: telling it
  /// resolves nothing on this stack, and dispatching it now or after the current reaction
  /// returns comes to the same order.
  ///
  /// Never inlined: its first look at the thread-local slot happens before anything in this
  /// function can suspend a coroutine, so it may use the inlined slot access (after a
  /// suspension only the out-of-line one is valid: see `ThreadSlot`).
  @usableFromInline @inline(never)
  static func notify(_ head: ReactionBits, owner: AnyObject, leavesPromiseGroup: Bool) {
    assert(!head.isNone && head.tags == 0, "a resolution notifies the chain it took")
    let owner = Unmanaged.passUnretained(owner)
    // A lone reaction given up (its link is just the mark) takes the other path: it is told
    // all the same.
    let isLoneDispatch = head.borrow {
      !$0.resolvesInlineWhenTold && $0.nextInChain.load(ordering: .relaxed) == .none
    }
    if isLoneDispatch {
      head.take().observedResolution(of: owner, cell: ResolutionCell.address(in: owner))
    } else if let drain = ThreadSlot.loadBeforeAnySuspension(ThreadSlot.resolution) {
      let rest = tellDispatches(head, owner: owner)
      if !rest.isNone {
        // The owner is retained until its chain has been told (`QueuedChain.finish`).
        let queued = QueuedChain(
          owner: OwnerBits(retaining: owner), leavesPromiseGroup: leavesPromiseGroup, next: rest)
        queue(queued, in: drain)
        return
      }
    } else {
      tellAsDrain(head, owner: owner)
    }
    if leavesPromiseGroup { DispatchGroup.promises.leave() }
  }

  /// Inside a drain: tells the reactions of the chain that only dispatch, at once, and returns
  /// the others, still linked in their order (0 if none), to be queued. So the blocks chained
  /// with `then` and friends are dispatched in registration order, before any block chained
  /// after the resolution, exactly as when nothing is queued.
  private static func tellDispatches(_ head: ReactionBits, owner: Unmanaged<AnyObject>)
    -> ReactionBits
  {
    var next = head
    var rest = ReactionBits.none
    var restTail: Unmanaged<Reaction>?
    while !next.isNone {
      let bits = next
      let reaction = bits.unmanaged
      // Read before telling it: a told reaction may at once be linked into another chain.
      next = bits.borrow { $0.nextInChain.load(ordering: .relaxed).untagged }
      if bits.borrow({ $0.resolvesInlineWhenTold }) {
        bits.borrow { $0.nextInChain.store(.none, ordering: .relaxed) }
        if let restTail {
          restTail._withUnsafeGuaranteedRef { $0.nextInChain.store(bits, ordering: .relaxed) }
        } else {
          rest = bits
        }
        restTail = reaction
      } else {
        let told = bits.take()
        told.poisonLink()  // read above
        told.observedResolution(of: owner, cell: ResolutionCell.address(in: owner))
      }
    }
    return rest
  }

  /// The outermost resolution on this stack: tells its chain right here, each reaction
  /// followed by what it queued, with a drain installed for the resolutions they make.
  @inline(never)
  private static func tellAsDrain(_ head: ReactionBits, owner: Unmanaged<AnyObject>) {
    withUnsafeTemporaryAllocation(of: QueuedChain.self, capacity: capacityInFrame) { frame in
      var drain = ResolutionDrain(
        stack: cov_fiber_current(), entries: frame.baseAddress!, capacity: capacityInFrame,
        count: 0)
      withUnsafeMutablePointer(to: &drain) { drain in
        assert(
          ThreadSlot.loadBeforeAnySuspension(ThreadSlot.resolution) == nil,
          "a stack has one drain: the outermost resolution on it")
        ThreadSlot.storeBeforeAnySuspension(ThreadSlot.resolution, drain)
        let cell = ResolutionCell.address(in: owner)
        var next = head
        repeat {
          do {
            let reaction = next.take()
            // Read before telling it: a told reaction may at once be linked into another chain.
            next = reaction.takeLink()
            reaction.observedResolution(of: owner, cell: cell)
          }
          if drain.pointee.count != 0 {
            reverseQueued(drain, from: 0)
            tellQueued(drain)
          }
        } while !next.isNone
        // Out of line: a coroutine that suspended in an observer may be on another thread now.
        ThreadSlot.store(ThreadSlot.resolution, nil)
        if drain.pointee.holdsPromiseGroup || drain.pointee.entriesOnHeap { end(drain) }
      }
    }
  }

  /// Before this stack waits — its coroutine suspends in an await, its thread blocks until a
  /// promise or a coroutine is done — tells the chains that the reaction being told queued in
  /// this stack's drain (and what they queue in turn). An observer may be about to wait for one
  /// of them (it resolved a future, then awaits a `map` of it), and the drain's loop, below the
  /// wait on this very stack, would tell them only after the observer returns: never, for a
  /// coroutine that suspends, whose drain goes with it. So they are told where the recursive
  /// notification told them, inside the observer; the chains queued before it still wait for
  /// it to return, in their order.
  ///
  /// Never inlined, as `notify`: it looks at the thread-local slot before anything in it can
  /// suspend a coroutine, so it may use the inlined slot access (in the caller, an await that
  /// may follow other suspensions, only the out-of-line one would be valid, at twice the
  /// instructions on every await).
  @inline(never)
  static func tellQueuedBeforeWaiting() {
    if let drain = ThreadSlot.loadBeforeAnySuspension(ThreadSlot.resolution) {
      tellQueuedBeforeWaiting(in: drain)
    }
  }

  @inline(never)
  private static func tellQueuedBeforeWaiting(in raw: UnsafeMutableRawPointer) {
    // Only a drain on this stack. A coroutine (or generator) run from inside a reaction of its
    // resumer's drain finds that drain in the slot and queues its resolutions there: the
    // resumer tells them once the coroutine switches out, so nothing is stranded. Telling them
    // from here instead, the coroutine could switch out in the middle of that loop and come
    // back to it after the resumer's drain, and its frame, had ended.
    let drain = raw.assumingMemoryBound(to: ResolutionDrain.self)
    guard drain.pointee.stack == cov_fiber_current() else { return }
    let mark = drain.pointee.mark
    assert(mark <= drain.pointee.count, "a drain's mark counts chains it still holds")
    guard drain.pointee.count > mark else { return }
    reverseQueued(drain, from: mark)
    tellQueued(drain, downTo: mark)
  }

  /// Releases the reactions of `head`, the chain of a cell deallocated while pending, which
  /// nobody will notify. Releasing a reaction can deallocate further pending promises (the
  /// ones it would have resolved): their chains are queued too, so a long unresolved chain is
  /// released by one loop, not by nested deinitializers.
  ///
  /// Never inlined, as every function that publishes a drain in its frame: the frame, and the
  /// slot's value, then belong to this function alone.
  @inline(never)
  static func release(_ head: ReactionBits) {
    if let drain = ThreadSlot.load(ThreadSlot.resolution) {
      queue(QueuedChain(toRelease: head), in: drain)
      return
    }
    withUnsafeTemporaryAllocation(of: QueuedChain.self, capacity: capacityInFrame) { frame in
      var drain = ResolutionDrain(
        stack: cov_fiber_current(), entries: frame.baseAddress!, capacity: capacityInFrame,
        count: 1)
      drain.entries.initialize(to: QueuedChain(toRelease: head))
      withUnsafeMutablePointer(to: &drain) { drain in
        ThreadSlot.store(ThreadSlot.resolution, drain)
        tellQueued(drain)
        ThreadSlot.store(ThreadSlot.resolution, nil)
        end(drain)
      }
    }
  }

  /// Gives back what the drain took on the way: its unit of the promise group, its heap room.
  private static func end(_ drain: UnsafeMutablePointer<ResolutionDrain>) {
    assert(drain.pointee.count == 0, "a drain ends once everything queued in it was told")
    if drain.pointee.holdsPromiseGroup { DispatchGroup.promises.leave() }
    if drain.pointee.entriesOnHeap { drain.pointee.entries.deallocate() }
  }

  /// The loop: tells the next reaction of the top chain; what that reaction queued is told
  /// next, first queued first; until `floor` chains are left (those queued before the reaction
  /// that `tellQueuedBeforeWaiting` tells the queue of), then `mark` is `floor` again.
  ///
  /// Everything goes through `drain` (never an `inout` copy): the reactions queue further
  /// chains through the same pointer, found in the thread-local slot; and a reaction that is
  /// about to wait may tell the chains above its own mark from within this loop.
  private static func tellQueued(
    _ drain: UnsafeMutablePointer<ResolutionDrain>, downTo floor: Int = 0
  ) {
    assert(drain.pointee.count >= floor, "a drain tells only the chains above its floor")
    while drain.pointee.count > floor {
      let top = drain.pointee.count - 1
      let chain = drain.pointee.entries[top]
      let next: ReactionBits
      let mark: Int
      do {
        let reaction = chain.next.take()
        // Read before telling it: a told reaction may at once be linked into another chain.
        let link = reaction.nextInChain.load(ordering: .relaxed)
        next = reaction.takeLink()
        if !next.isNone {
          drain.pointee.entries[top].next = next
        } else {
          drain.pointee.count = top
        }
        mark = drain.pointee.count
        assert(mark >= floor, "a reaction tells only what was queued above the drain's floor")
        drain.pointee.mark = mark
        if let owner = chain.ownerObject {
          reaction.observedResolution(of: owner, cell: ResolutionCell.address(in: owner))
        } else if link.tags & ReactionChain.givenUpMark != 0 {
          // Given up in a cell that is gone: telling it frees its link (it reads no owner).
          tellGivenUp(reaction)
        }
        // `reaction` is released here (for a chain only to release: deinitialized, which may
        // deallocate pending promises and queue their chains).
      }
      reverseQueued(drain, from: mark)
      if next.isNone { chain.finish() }
    }
    drain.pointee.mark = floor
  }

  /// Tells a reaction given up in a cell deallocated while pending that its link is free (see
  /// `ReactionChain`), through a stand-in owner: its await has ended, so it reads none.
  @inline(never)
  private static func tellGivenUp(_ reaction: Reaction) {
    let owner = Unmanaged<AnyObject>.passUnretained(givenUpStandIn)
    reaction.observedResolution(of: owner, cell: ResolutionCell.address(in: owner))
  }

  /// Puts the chains queued since `mark` in the order they were queued (the first on top).
  private static func reverseQueued(_ drain: UnsafeMutablePointer<ResolutionDrain>, from mark: Int)
  {
    var low = mark
    var high = drain.pointee.count - 1
    while low < high {
      drain.pointee.entries.swapAt(low, high)
      low += 1
      high -= 1
    }
  }

  /// Queues `chain` in the drain `raw` (the value of the thread-local slot).
  private static func queue(_ chain: QueuedChain, in raw: UnsafeMutableRawPointer) {
    assert(!chain.next.isNone, "a queued chain has a reaction to tell")
    let drain = raw.assumingMemoryBound(to: ResolutionDrain.self)
    assert(drain.pointee.count <= drain.pointee.capacity, "a drain's queue fits its room")
    if !drain.pointee.holdsPromiseGroup {
      DispatchGroup.promises.enter()
      drain.pointee.holdsPromiseGroup = true
    }
    if drain.pointee.count == drain.pointee.capacity { grow(drain) }
    (drain.pointee.entries + drain.pointee.count).initialize(to: chain)
    drain.pointee.count += 1
  }

  /// Doubles the room for queued chains, on the heap.
  private static func grow(_ drain: UnsafeMutablePointer<ResolutionDrain>) {
    let capacity = drain.pointee.capacity * 2
    let entries = UnsafeMutablePointer<QueuedChain>.allocate(capacity: capacity)
    entries.moveInitialize(from: drain.pointee.entries, count: drain.pointee.count)
    if drain.pointee.entriesOnHeap { drain.pointee.entries.deallocate() }
    drain.pointee.entries = entries
    drain.pointee.capacity = capacity
    drain.pointee.entriesOnHeap = true
  }
}

extension UnsafeMutablePointer where Pointee == QueuedChain {
  fileprivate func swapAt(_ i: Int, _ j: Int) {
    let saved = self[i]
    self[i] = self[j]
    self[j] = saved
  }
}

/// The owner that reactions given up in a cell deallocated while pending are told about.
private let givenUpStandIn = Promise<Void>(result: .success(()))
