#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The `whenFinished` callbacks of a coroutine: a lock-free stack in one word (`completion`).
///
/// Adding a callback is one compare-and-swap; finishing is one exchange with `finishedMark`,
/// which hands the callbacks added so far to the finisher (later ones run at once). A waiter
/// that gives up (a `join()` whose coroutine is cancelled) takes its callback out again, so that
/// it does not keep the waiter until the coroutine finishes, maybe never: it sets
/// `removingMark` on the word, unlinks its node, and puts the word back. While the mark is set,
/// adders wait for it to go (removals are rare and short); a finisher that finds it set leaves
/// the callbacks to the remover, which runs them once it sees it could not put the word back.
extension CoroutineContext {
  /// The word once the coroutine has finished: no callback, tagged.
  static var finishedMark: CallbackBits { CallbackBits(unsafeWord: 1) }
  /// Tagged on the head while a removal walks the list.
  static let removingMark: UInt = 2

  /// Registers `callback` to run when the coroutine finishes (at once if it has), and returns
  /// its node, with which `removeFinishCallback` takes it out again; `nil` if it ran at once.
  @discardableResult
  func whenFinished(_ callback: @escaping () -> Void) -> CompletionCallback? {
    let node = CompletionCallback(callback)
    let bits = CallbackBits(retaining: node)
    var current = completion.load(ordering: .acquiring)
    while current != Self.finishedMark {
      if _slowPath(current.tags & Self.removingMark != 0) {
        current = waitForRemoval()
        continue
      }
      node.next = current
      let (exchanged, original) = completion.compareExchange(
        expected: current, desired: bits, ordering: .acquiringAndReleasing)
      if exchanged { return node }
      current = original
    }
    node.next = .none
    bits.release()
    callback()
    return nil
  }

  /// Marks the coroutine finished and runs the callbacks registered so far, in the order they
  /// were added (later ones run at once in `whenFinished`). If a removal holds the list, the
  /// remover runs them instead, as soon as it is done.
  @inline(__always)
  func runFinishCallbacks() {
    let last = completion.exchange(Self.finishedMark, ordering: .acquiringAndReleasing)
    assert(last != Self.finishedMark, "a coroutine finishes once")
    guard !last.isNone, last.tags & Self.removingMark == 0 else { return }
    Self.run(last)
  }

  /// Takes `node` (from `whenFinished`) out of the callbacks, releasing what its callback
  /// holds. Returns false if it was no longer there: the coroutine has finished, and the
  /// callback has run or is about to.
  @discardableResult
  func removeFinishCallback(_ node: CompletionCallback) -> Bool {
    guard let head = lockCallbacks() else { return false }
    let target = CallbackBits(ownedElsewhere: Unmanaged.passUnretained(node))
    var newHead = head
    var found = false
    if head == target {
      newHead = node.next
      found = true
    } else {
      var bits = head
      while !bits.isNone {
        let previous = Self.node(bits)
        if previous.next == target {
          previous.next = node.next
          found = true
          break
        }
        bits = previous.next
      }
    }
    unlockCallbacks(head, newHead: newHead)
    // The list's retain of the node, now unlinked; the caller's keeps the node itself.
    if found { target.release() }
    return found
  }

  /// How many callbacks wait for the coroutine to finish (0 once it has). For tests.
  var finishCallbackCount: Int {
    guard let head = lockCallbacks() else { return 0 }
    var count = 0
    var bits = head
    while !bits.isNone {
      count += 1
      bits = Self.node(bits).next
    }
    unlockCallbacks(head, newHead: head)
    return count
  }

  /// Tags `removingMark` on the head; returns the head it was set on, or `nil` if the
  /// coroutine has finished (nothing to take out).
  private func lockCallbacks() -> CallbackBits? {
    var current = completion.load(ordering: .acquiring)
    while current != Self.finishedMark {
      if current.tags & Self.removingMark != 0 {
        current = waitForRemoval()
        continue
      }
      let (exchanged, original) = completion.compareExchange(
        expected: current, desired: current.tagged(Self.removingMark),
        ordering: .acquiringAndReleasing)
      if exchanged { return current }
      current = original
    }
    return nil
  }

  /// Puts the list back as `newHead` after `lockCallbacks` returned `head`; if the coroutine
  /// finished meanwhile (`runFinishCallbacks` left the list to this removal), runs it.
  private func unlockCallbacks(_ head: CallbackBits, newHead: CallbackBits) {
    let (restored, _) = completion.compareExchange(
      expected: head.tagged(Self.removingMark), desired: newHead,
      ordering: .acquiringAndReleasing)
    if !restored, !newHead.isNone { Self.run(newHead) }
  }

  /// Waits while another thread removes a callback (a few loads of a short list); returns the
  /// word it left.
  @inline(never)
  private func waitForRemoval() -> CallbackBits {
    while true {
      let current = completion.load(ordering: .acquiring)
      if current.tags & Self.removingMark == 0 || current == Self.finishedMark { return current }
      sched_yield()
    }
  }

  private static func node(_ bits: CallbackBits) -> CompletionCallback {
    bits.unmanaged.takeUnretainedValue()
  }

  /// Runs (and releases) the callbacks of the list `last`, first added first.
  private static func run(_ last: CallbackBits) {
    var callbacks: [() -> Void] = []
    var bits = last
    while !bits.isNone {
      let node = bits.take()
      callbacks.append(node.callback)
      bits = node.next
      node.next = .none
    }
    for callback in callbacks.reversed() { callback() }
  }
}

/// A retained reference to a `whenFinished` callback's node.
typealias CallbackBits = UnsafeRetainedBits<CompletionCallback>
