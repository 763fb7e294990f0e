import CCoroutineContext
import Dispatch

/// Hands a `Reaction` to a `DispatchQueue` with `dispatch_async_f`: the reaction object is the
/// work item's context, so dispatching allocates nothing (Swift's `async` allocates a closure
/// context and a block for every call).
///
/// On Apple platforms a `DispatchQueue` *is* the `dispatch_queue_t`. On Linux it is a Swift
/// object that keeps the `dispatch_queue_t` in its first stored property; that layout is checked
/// once per process, on a queue made for the purpose, by reading the label through
/// libdispatch. If the check fails (a different corelibs layout), every reaction goes through
/// `DispatchQueue.async` instead: slower, never wrong.
enum DirectDispatch {
  /// Whether the direct path is usable in this process.
  static let isAvailable: Bool = {
    let label = "dev.covenant.direct-dispatch-probe"
    let probe = DispatchQueue(label: label)
    guard let label = cov_dispatch_queue_label(rawQueue(probe)) else { return false }
    return String(cString: label) == "dev.covenant.direct-dispatch-probe"
  }()

  /// The `dispatch_queue_t` of `queue`.
  @inline(__always)
  static func rawQueue(_ queue: DispatchQueue) -> UnsafeMutableRawPointer {
    let object = Unmanaged.passUnretained(queue).toOpaque()
    #if canImport(Darwin)
      return object
    #else
      // swift-corelibs-libdispatch: `final class DispatchQueue { let __wrapped: dispatch_queue_t }`
      // right after the two-word object header. Verified by `isAvailable` before any use.
      return object.load(fromByteOffset: 2 * MemoryLayout<Int>.size, as: UnsafeMutableRawPointer.self)
    #endif
  }

  /// `async(_:on:)` with the `dispatch_queue_t` of a `DirectDispatchTarget`, whose queue the
  /// caller keeps alive.
  @inline(__always)
  static func async(_ reaction: Reaction, onRawQueue queue: UnsafeMutableRawPointer) {
    cov_dispatch_async_f(queue, Unmanaged.passRetained(reaction).toOpaque(), runReactionTask)
  }

  /// Runs `reaction` as a task of `queue` (through the hand-off slot mechanism of
  /// `SchedulerTurn` once it runs).
  static func async(_ reaction: Reaction, on queue: DispatchQueue) {
    if isAvailable {
      async(reaction, onRawQueue: rawQueue(queue))
    } else {
      queue.async { SchedulerTurn.run(reaction) }
    }
  }
}

/// A `DispatchQueue` and its `dispatch_queue_t`, read once (nil when `DirectDispatch` is not
/// usable): what a coroutine keeps to dispatch each of its slices without copying a reference.
struct DirectDispatchTarget {
  let queue: DispatchQueue
  let rawQueue: UnsafeMutableRawPointer?

  init(_ queue: DispatchQueue) {
    self.queue = queue
    rawQueue = DirectDispatch.isAvailable ? DirectDispatch.rawQueue(queue) : nil
  }
}

/// The C entry point of a directly dispatched reaction: takes back the reference passed with
/// it and runs it as a scheduler task.
private func runReactionTask(_ context: UnsafeMutableRawPointer?) {
  SchedulerTurn.run(Unmanaged<Reaction>.fromOpaque(context!).takeRetainedValue())
}
