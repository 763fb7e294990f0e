import CCoroutineContext

/// Runs coroutine slices inside one scheduler task, with a one-coroutine hand-off slot.
///
/// When a coroutine running in this task wakes another coroutine of the *same* scheduler
/// (a promise it fulfils, a channel it sends on), the woken one is put in the slot and run right
/// after the current one suspends, in the same task: one context switch instead of a queue hop.
/// This is still "on the scheduler" (it is the scheduler's task that runs it) and still
/// asynchronous to the waker. Only one coroutine fits in the slot — further wakes go through
/// `scheduleTask` — so fan-out keeps its parallelism on concurrent queues, and after
/// `handOffBudget` consecutive hand-offs the task yields the scheduler to other work.
enum CoroutineRunner {
  struct Record {
    let identity: ObjectIdentifier?
    var next: Unmanaged<CoroutineContext>?
  }

  static let handOffBudget = 64

  static func run(_ first: CoroutineContext) {
    var record = Record(identity: first.schedulerIdentity, next: nil)
    withUnsafeMutablePointer(to: &record) { record in
      let previous = cov_tls_get(ThreadSlot.runner)
      cov_tls_set(ThreadSlot.runner, UnsafeMutableRawPointer(record))
      defer { cov_tls_set(ThreadSlot.runner, previous) }
      var current = first
      var budget = handOffBudget
      while true {
        while current.runSlice() {}
        guard let next = record.pointee.next?.takeRetainedValue() else { return }
        record.pointee.next = nil
        budget -= 1
        if budget == 0 {
          next.scheduleTask()
          return
        }
        current = next
      }
    }
  }

  /// Puts `coroutine` in this thread's hand-off slot if the running task serves its scheduler
  /// and the slot is free.
  static func handOff(_ coroutine: CoroutineContext) -> Bool {
    guard let raw = cov_tls_get(ThreadSlot.runner) else { return false }
    let record = raw.assumingMemoryBound(to: Record.self)
    guard record.pointee.next == nil, let identity = coroutine.schedulerIdentity,
      record.pointee.identity == identity
    else { return false }
    record.pointee.next = .passRetained(coroutine)
    return true
  }
}
