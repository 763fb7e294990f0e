import CCoroutineContext
import Dispatch

/// Work a scheduler task can run: a promise block (which has entered `DispatchGroup.promises`
/// and leaves it once run) or a slice of a coroutine.
enum TurnItem {
  case block(DispatchQueue, () -> Void)
  case coroutine(CoroutineContext)
}

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
  var next: TurnItem?

  static let handOffBudget = 128

  /// Runs `first` as a task of the scheduler identified by `scheduler`, then whatever is
  /// handed off to it. Without an identity (value-type schedulers) nothing can be handed off.
  static func run(on scheduler: ObjectIdentifier?, _ first: TurnItem) {
    guard let scheduler else {
      execute(first)
      return
    }
    var turn = SchedulerTurn(scheduler: scheduler, next: nil)
    withUnsafeMutablePointer(to: &turn) { turn in
      let previous = cov_tls_load(ThreadSlot.turn)
      cov_tls_store(ThreadSlot.turn, UnsafeMutableRawPointer(turn))
      defer { cov_tls_store(ThreadSlot.turn, previous) }
      var item = first
      for _ in 0..<handOffBudget {
        execute(item)
        guard let next = turn.pointee.next else { return }
        turn.pointee.next = nil
        item = next
      }
      execute(item)
      if let next = turn.pointee.next {
        turn.pointee.next = nil
        reschedule(next)
      }
    }
  }

  /// Puts `item` in the slot if this thread is running a task of `scheduler` whose slot is
  /// free; otherwise returns false and the caller schedules it normally.
  static func handOff(_ item: TurnItem, to scheduler: ObjectIdentifier) -> Bool {
    guard let raw = cov_tls_load(ThreadSlot.turn) else { return false }
    let turn = raw.assumingMemoryBound(to: SchedulerTurn.self)
    guard turn.pointee.scheduler == scheduler else { return false }
    if case .some = turn.pointee.next { return false }
    turn.pointee.next = item
    return true
  }

  private static func execute(_ item: TurnItem) {
    switch item {
    case .block(_, let block):
      block()
      DispatchGroup.promises.leave()
    case .coroutine(let coroutine):
      while coroutine.runSlice() {}
    }
  }

  /// Sends an item that did not get its turn back through its scheduler.
  static func reschedule(_ item: TurnItem) {
    switch item {
    case .block(let queue, let block): PromiseDispatch.enqueue(.block(queue, block), on: queue)
    case .coroutine(let coroutine): coroutine.scheduleTask()
    }
  }
}
