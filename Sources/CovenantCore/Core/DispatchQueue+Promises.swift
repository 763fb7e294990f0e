import Dispatch

extension DispatchQueue {
  /// The queue promise blocks run on when no `on:` queue is given. Initially `.main`.
  ///
  /// Command-line programs and servers on Linux usually do not run the main queue: set this to
  /// a global queue at startup (`DispatchQueue.promises = .global()`), or run the main run loop /
  /// `dispatchMain()`, or blocks chained without `on:` never run.
  public static var promises: DispatchQueue {
    get { defaultPromiseQueue.withCriticalSection { $0 } }
    set { defaultPromiseQueue.withCriticalSection { $0 = newValue } }
  }
}

private let defaultPromiseQueue = InlineMutex<DispatchQueue>(.main)
