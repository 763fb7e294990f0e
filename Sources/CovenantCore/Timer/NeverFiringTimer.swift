/// The timer of a task that will never run (a delay of `.never`).
struct NeverFiringTimer: CoroutineTimer {
  func cancel() {}
}
