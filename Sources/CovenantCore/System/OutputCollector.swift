#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Collects everything a child writes to one of its output pipes, for `CoProcess.run`: the
/// watcher's thread reads whatever the pipe holds each time it is readable, until the end of
/// file. Unlike `PipeReader` (a started process's lines, read on demand), it reads eagerly: the
/// caller asked for the whole output, and a child must not block on one pipe while the other
/// is drained.
///
/// `@unchecked Sendable`: the bytes and the descriptor are only touched under `state`'s lock,
/// the reads included, so that `close()` can never close the descriptor while a read uses it.
final class OutputCollector: WatchedPipe, @unchecked Sendable {
  private static let chunkSize = 64 << 10

  private struct State {
    let bytes = ByteAccumulator(capacity: 64 << 10)
    var isClosed = false
    /// Called once, at the end of the output.
    var onEnd: (@Sendable () -> Void)?
  }

  private let state: InlineMutex<State>

  /// Collects from `fd` once `start()` is called; `onEnd` is called (on the watcher's thread)
  /// at the end of the output, after which the pipe is closed.
  init(fd: Int32, path: String, watcher: IOWatcher, onEnd: @escaping @Sendable () -> Void) {
    state = InlineMutex(State(onEnd: onEnd))
    super.init(fd: fd, path: path, watcher: watcher)
  }

  deinit { close() }

  func start() { watcherEvent(0) }

  /// What was collected (all of it once `onEnd` was called).
  func take() -> [UInt8] {
    state.withCriticalSection { $0.bytes.takeBytes() }
  }

  override func watcherEvent(_ flags: UInt32) {
    let (ended, rearm) = state.withCriticalSection { state -> ((@Sendable () -> Void)?, Bool) in
      guard !state.isClosed else { return (nil, false) }
      while true {
        let result = PosixFile.readOrError(
          fd, into: state.bytes.reserve(Self.chunkSize), count: Self.chunkSize)
        if result > 0 {
          state.bytes.commit(result)
          continue
        }
        if result < 0 && (Int32(-result) == EAGAIN || Int32(-result) == EWOULDBLOCK) {
          return (nil, true)
        }
        // The end of the output (or a read error, which ends it as well).
        closeDescriptor(&state)
        defer { state.onEnd = nil }
        return (state.onEnd, false)
      }
    }
    if rearm && !arm(forWriting: false) {
      // Cannot be watched (never expected): end the output rather than hang.
      let onEnd = state.withCriticalSection { state -> (@Sendable () -> Void)? in
        closeDescriptor(&state)
        defer { state.onEnd = nil }
        return state.onEnd
      }
      onEnd?()
    }
    ended?()
  }

  /// Stops collecting (the caller gave up): closes the pipe; `onEnd` is not called.
  func close() {
    state.withCriticalSection { state in
      closeDescriptor(&state)
      state.onEnd = nil
    }
  }

  private func closeDescriptor(_ state: inout State) {
    guard !state.isClosed else { return }
    state.isClosed = true
    forgetAndClose()
  }
}
