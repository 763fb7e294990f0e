import Dispatch

extension DispatchQueue {
  /// The queue promise blocks run on when no `on:` queue is given. Initially `.main`.
  ///
  /// Command-line programs and servers on Linux usually do not run the main queue: set this to
  /// a global queue at startup (`DispatchQueue.promises = .global()`), or run the main run loop /
  /// `dispatchMain()`, or blocks chained without `on:` never run.
  ///
  /// In debug builds, if blocks go to the initial `.main` and the main queue then does not run
  /// for 5 seconds, a warning saying so is written to standard error (once per process).
  public static var promises: DispatchQueue {
    get {
      let (queue, isInitialMain) = defaultPromiseQueue.withCriticalSection {
        ($0.queue, $0.isInitialMain)
      }
      if isInitialMain { MainQueueStallWarning.armOnce() }
      return queue
    }
    set {
      defaultPromiseQueue.withCriticalSection {
        $0 = PromiseQueueSetting(queue: newValue, isInitialMain: false)
      }
    }
  }
}

/// `DispatchQueue.promises`, and whether it is still the initial `.main` (for the debug
/// warning of `MainQueueStallWarning`).
private struct PromiseQueueSetting {
  var queue: DispatchQueue
  var isInitialMain: Bool
}

private let defaultPromiseQueue = InlineMutex(
  PromiseQueueSetting(queue: .main, isInitialMain: true))
