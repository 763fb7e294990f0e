import Dispatch
import Synchronization

extension DispatchGroup {
  /// The group that every pending promise and every dispatched promise block belongs to.
  ///
  /// A pending promise enters it when created and leaves when resolved or deallocated; each
  /// observer and work block is dispatched through it. `waitForPromises(timeout:)` waits for it
  /// to empty.
  public static let promises = DispatchGroup()
}

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

private let defaultPromiseQueue = Mutex<DispatchQueue>(.main)
