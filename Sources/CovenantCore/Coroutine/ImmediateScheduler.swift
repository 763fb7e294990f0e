/// Runs tasks at once on the calling thread: where `CoFuture(task:)` coroutines start, and
/// where they continue after an `await` (on the thread that resumed them).
struct ImmediateScheduler: CoroutineScheduler {
  func scheduleTask(_ task: @escaping () -> Void) { task() }
}
