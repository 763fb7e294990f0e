import CCovenantShims
import Dispatch

/// The scheduler task a thread is running right now, with a one-item hand-off slot: the one
/// mechanism that lets promise blocks and coroutines continue without a new queue hop.
///
/// When work running in a task of scheduler S makes more work ready *for S* — a `then` block
/// whose promise it fulfils, a coroutine it wakes — that work is put in the slot and run right
/// after the current item, in the same task. It still runs on S and still asynchronously to
/// the code that made it ready (never inline), but costs no `async` and no thread wake-up.
///
/// Only one item fits (Go's `runnext`): further work goes through the scheduler as usual, so
/// fan-out keeps its parallelism on concurrent queues. After `handOffBudget` consecutive
/// hand-offs the task gives the scheduler back to other work.
struct SchedulerTurn {
  let scheduler: ObjectIdentifier
  var next: Reaction?

  static let handOffBudget = 128

  /// Runs `first` as a task of its scheduler, then whatever is handed off to it. Without a
  /// scheduler identity (value-type schedulers) nothing can be handed off.
  ///
  /// Takes `first` (consumed: the caller keeps no reference, so each item is released right
  /// after it ran).
  static func run(_ first: consuming Reaction) {
    guard let scheduler = first.schedulerIdentity else {
      execute(first)
      return
    }
    var pending: Reaction? = consume first
    var turn = SchedulerTurn(scheduler: scheduler, next: nil)
    withUnsafeMutablePointer(to: &turn) { turn in
      let previous = ThreadSlot.load(ThreadSlot.turn)
      ThreadSlot.store(ThreadSlot.turn, UnsafeMutableRawPointer(turn))
      defer { ThreadSlot.store(ThreadSlot.turn, previous) }
      execute(pending.take()!)
      for _ in 0..<handOffBudget {
        guard let next = turn.pointee.next.take() else { return }
        execute(next)
      }
      if let next = turn.pointee.next.take() { next.reschedule() }
    }
  }

  /// Puts `reaction` in the slot if this thread is running a task of `scheduler` whose slot is
  /// free; otherwise returns false and the caller schedules it normally.
  static func handOff(_ reaction: Reaction, to scheduler: ObjectIdentifier) -> Bool {
    guard let raw = ThreadSlot.load(ThreadSlot.turn) else { return false }
    let turn = raw.assumingMemoryBound(to: SchedulerTurn.self)
    guard turn.pointee.scheduler == scheduler, turn.pointee.next == nil else { return false }
    assert(reaction.schedulerIdentity == scheduler, "a reaction is handed off to its scheduler")
    turn.pointee.next = reaction
    return true
  }

  /// Runs `item`, releases it (and so whatever it holds), then leaves the promise group if it
  /// belongs to it: a `waitForPromises` that returns finds everything already released.
  private static func execute(_ item: consuming Reaction) {
    let leavesGroup = item.leavesPromiseGroup
    item.run()
    _ = consume item
    if leavesGroup { DispatchGroup.promises.leave() }
  }
}
