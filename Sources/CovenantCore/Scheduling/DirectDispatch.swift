import CCovenantShims
import Dispatch

/// Hands a `Reaction` to a `DispatchQueue` with `dispatch_async_f`: the reaction object is the
/// work item's context, so dispatching allocates nothing (Swift's `async` allocates a closure
/// context and a block for every call).
///
/// On Apple platforms a `DispatchQueue` *is* the `dispatch_queue_t`. On Linux it is a Swift
/// object (swift-corelibs-libdispatch: `DispatchQueue`, a subclass of `DispatchObject`, which
/// has no stored property) that keeps the `dispatch_queue_t` in its own first stored property,
/// `__wrapped`, right after the two-word object header. That layout is checked once per
/// process without handing libdispatch anything unverified: inside a `sync` on a probe queue,
/// the word read from the probe object must be, by address, the queue libdispatch reports as
/// current (`dispatch_get_current_queue`), and the word must lie inside the object's heap
/// block. If the check fails (a different corelibs layout), or `COVENANT_DIRECT_DISPATCH=0` is
/// set, every reaction goes through `DispatchQueue.async` instead: slower, never wrong.
package enum DirectDispatch {
  /// Whether the direct path is usable in this process.
  package static let isAvailable: Bool = {
    if cov_direct_dispatch_disabled() != 0 { return false }
    #if canImport(Darwin)
      return true
    #else
      let probe = DispatchQueue(label: "dev.covenant.direct-dispatch-probe")
      let object = Unmanaged.passUnretained(probe).toOpaque()
      guard cov_heap_block_size(object) >= 3 * MemoryLayout<UInt>.stride else { return false }
      let candidate = rawQueue(probe)
      var current: UnsafeMutableRawPointer?
      probe.sync { current = cov_dispatch_current_queue() }
      return current == candidate  // compared, never dereferenced
    #endif
  }()

  /// The `dispatch_queue_t` of `queue`.
  @inline(__always)
  package static func rawQueue(_ queue: DispatchQueue) -> UnsafeMutableRawPointer {
    let object = Unmanaged.passUnretained(queue).toOpaque()
    #if canImport(Darwin)
      return object
    #else
      // `__wrapped`, right after the two-word object header: verified by `isAvailable` before
      // any use (see above).
      assert(
        cov_heap_block_size(object) >= 3 * MemoryLayout<UInt>.stride,
        "a DispatchQueue object holds its dispatch_queue_t after its header")
      return object.load(
        fromByteOffset: 2 * MemoryLayout<UInt>.stride, as: UnsafeMutableRawPointer.self)
    #endif
  }

  /// `async(_:on:)` with a queue's `dispatch_queue_t` (`rawQueue`), whose queue the caller
  /// keeps alive.
  @inline(__always)
  static func async(_ reaction: Reaction, onRawQueue queue: UnsafeMutableRawPointer) {
    assert(isAvailable, "the direct path is used only where its layout check passed")
    cov_dispatch_async_f(queue, ReactionBits(retaining: reaction).unsafeContext, runReactionTask)
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

/// The C entry point of a directly dispatched reaction: takes back the reference passed with
/// it and runs it as a scheduler task.
private func runReactionTask(_ context: UnsafeMutableRawPointer?) {
  SchedulerTurn.run(ReactionBits(unsafeContext: context).take())
}
