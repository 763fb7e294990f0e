#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The read end of a child's output pipe, read on demand: the consumer (`CoLines`) reads it
/// itself, without blocking (the descriptor is non-blocking), and when it is empty waits for
/// the watcher to say it is readable again. Nothing reads the pipe while nobody asks, so a
/// child writing faster than its lines are consumed blocks once the pipe is full.
///
/// `@unchecked Sendable`: `isClosed` and the reads belong to the one consumer (`CoLines`
/// checks); the waiter is handed between the consumer and the watcher under `waiter`'s lock.
final class PipeReader: WatchedPipe, LineSource, @unchecked Sendable {
  private var isClosed = false
  /// The consumer waiting for the pipe to become readable.
  private let waiter = InlineMutex<SystemWaiter?>(nil)

  deinit { close() }

  func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
    while !isClosed {
      let result = PosixFile.readOrError(fd, into: buffer, count: count)
      if result > 0 { return result }
      if result == 0 { break }
      let code = Int32(-result)
      guard code == EAGAIN || code == EWOULDBLOCK else {
        throw CoSystemError(operation: "read", path: path, code: code)
      }
      try waitUntilReadable()
    }
    close()
    return 0
  }

  /// Suspends (or blocks) until the watcher reports the pipe readable (or closed at the
  /// other end).
  private func waitUntilReadable() throws(CoroutineError) {
    try SystemWaiter.wait(
      detail: metadataBits(CoProcess.self),
      register: { waiting in
        waiter.withCriticalSection { $0 = waiting }  // before arming: the event may come at once
        if !arm(forWriting: false) {
          // Cannot be watched (never expected): let the read report what is wrong.
          waiter.withCriticalSection { $0 = nil }
          waiting.resume()
        }
      },
      withdraw: { waiter.withCriticalSection { $0 = nil } })
  }

  override func watcherEvent(_ flags: UInt32) {
    waiter.withCriticalSection { waiting -> SystemWaiter? in
      defer { waiting = nil }
      return waiting
    }?.resume()
  }

  func close() {
    guard !isClosed else { return }
    isClosed = true
    forgetAndClose()
  }
}
