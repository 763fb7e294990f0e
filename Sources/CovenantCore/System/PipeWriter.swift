#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The write end of a child's standard input. Writes are made by the watcher's thread, as
/// the pipe accepts them (the descriptor is non-blocking): a child that does not read holds the
/// writer back (back-pressure), and a child that exited turns the write into `EPIPE` there,
/// where SIGPIPE is blocked, instead of a signal that stops the process.
///
/// `@unchecked Sendable`: everything is under `state`'s lock, the writes included, so that
/// `close()` can never close the descriptor while a write uses it.
final class PipeWriter: WatchedPipe, @unchecked Sendable {
  private struct Pending {
    var bytes: [UInt8]
    var offset: Int
    /// Called with 0 once every byte is written, or with the errno value of the failure.
    let done: @Sendable (Int32) -> Void
  }

  private struct State {
    var pending: Pending?
    var isClosed = false
  }

  private let state = InlineMutex(State())

  deinit { close() }

  /// Starts writing `bytes`; `done` is called (on the watcher's thread, or at once when the
  /// pipe is closed or busy) with 0 once all are written, else the errno value: `EPIPE` when
  /// the child closed its end or this end was closed, `EBUSY` when a write is in progress.
  func startWriting(_ bytes: [UInt8], done: @escaping @Sendable (Int32) -> Void) {
    let refusal = state.withCriticalSection { state -> Int32 in
      if state.isClosed { return EPIPE }
      if state.pending != nil { return EBUSY }
      state.pending = Pending(bytes: bytes, offset: 0, done: done)
      return 0
    }
    if refusal != 0 { return done(refusal) }
    if bytes.isEmpty { return watcherEvent(0) }
    if !arm(forWriting: true) { watcherEvent(0) }
  }

  /// Writes all of `bytes`, suspending the calling coroutine (or blocking the thread) until the
  /// child has taken them into its pipe.
  ///
  /// - Throws: `CoSystemError` (`write`: `EPIPE` when the child no longer reads its input);
  ///   `CoroutineError.canceled` (the bytes written so far stay written, the rest are not).
  func write(_ bytes: [UInt8]) throws {
    let failure = WaiterSlot(Int32(0))
    try SystemWaiter.wait(
      detail: metadataBits(CoProcess.self),
      register: { waiter in
        startWriting(bytes) { code in
          failure.value = code
          waiter.resume()
        }
      },
      withdraw: { state.withCriticalSection { $0.pending = nil } })
    let code = failure.value
    if code != 0 { throw CoSystemError(operation: "write", path: path, code: code) }
  }

  override func watcherEvent(_ flags: UInt32) {
    let (done, code, rearm) = state.withCriticalSection {
      state -> ((@Sendable (Int32) -> Void)?, Int32, Bool) in
      guard !state.isClosed, var pending = state.pending else { return (nil, 0, false) }
      state.pending = nil
      while pending.offset < pending.bytes.count {
        let written = pending.bytes.withUnsafeBytes {
          systemWrite(fd, $0.baseAddress! + pending.offset, $0.count - pending.offset)
        }
        if written >= 0 {
          pending.offset += written
          continue
        }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK {
          state.pending = pending
          return (nil, 0, true)
        }
        return (pending.done, code, false)
      }
      return (pending.done, 0, false)
    }
    if rearm, !arm(forWriting: true) {
      // Cannot be watched (never expected): fail the write rather than leave it hanging.
      let abandoned = state.withCriticalSection { state -> Pending? in
        defer { state.pending = nil }
        return state.pending
      }
      abandoned?.done(EPIPE)
    }
    done?(code)
  }

  /// Closes the pipe: the child reads the end of its input. A write in progress ends with
  /// `EPIPE`.
  func close() {
    let abandoned = state.withCriticalSection { state -> Pending?? in
      guard !state.isClosed else { return nil }
      state.isClosed = true
      defer { state.pending = nil }
      return .some(state.pending)
    }
    guard let abandoned else { return }
    forgetAndClose()
    abandoned?.done(EPIPE)
  }
}
