import Dispatch

/// A debug-build warning, once per process, for the trap a server or command-line program falls
/// into: promise blocks chained without `on:` go to `DispatchQueue.promises`, initially `.main`,
/// and a program whose main thread never runs the main queue (a NIO server waiting in
/// `closeFuture.wait()`, a tool blocked on a semaphore) never runs them.
///
/// The first time `DispatchQueue.promises` hands out the default main queue, a block is queued
/// on the main queue and a check on a global queue `delay` later: if the block has not run by
/// then, one line goes to standard error. Release builds compile none of it.
package enum MainQueueStallWarning {
  /// How long the main queue may stay idle before the warning, in milliseconds (5 s; tests of
  /// the warning shorten it).
  package static let delayMilliseconds = InlineAtomic<UInt>(5_000)

  #if DEBUG
    private static let armed = InlineByteAtomic<Bool>(false)
    private static let mainRan = InlineByteAtomic<Bool>(false)

    /// Arms the check (once per process).
    static func armOnce() {
      if armed.load(ordering: .relaxed) { return }
      if armed.exchange(true, ordering: .acquiringAndReleasing) { return }
      DispatchQueue.main.async { mainRan.store(true, ordering: .releasing) }
      let delay = DispatchTimeInterval.milliseconds(Int(delayMilliseconds.load(ordering: .relaxed)))
      DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
        if !mainRan.load(ordering: .acquiring) { warn() }
      }
    }

    private static func warn() {
      writeLineToStandardError(
        """
        Covenant: promise blocks chained without `on:` are waiting for DispatchQueue.main, which \
        has not run for \(delayMilliseconds.load(ordering: .relaxed) / 1000) s. Programs whose main thread does not run the main queue (servers, \
        command-line tools) set `DispatchQueue.promises = .global()` at startup, pass `on:`, or \
        call `dispatchMain()`. (Debug builds only; printed once.)
        """)
    }
  #else
    @inline(__always) static func armOnce() {}
  #endif
}
