import CCoroutineContext
import CCovenantShims

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Something the watcher reports to, on its thread: a pipe became readable or writable (or its
/// other end closed), or a child exited. Called without any watcher lock held; must not block.
protocol WatcherClient: AnyObject, Sendable {
  func watcherEvent(_ flags: UInt32)
}

/// The one thread that waits for every child process and pipe of `CoProcess`: an `epoll`
/// instance on Linux, a `kqueue` on Apple platforms, started when the first child is.
///
/// Interest is one-shot: a client arms a descriptor when it wants one event (a reader that
/// found its pipe empty, a writer whose pipe was full), the event disarms it, and the client
/// is told on this thread. So a pipe nobody reads is never read: the child that writes into
/// it blocks once it is full (back-pressure), and this thread does nothing for it.
///
/// Clients are found by a token (the event carries it), never by address: an event that
/// comes after its client has gone finds nothing. Children without a pidfd (a kernel before
/// 5.3, or a seccomp filter that refuses `pidfd_open`) are checked every 50 ms instead.
///
/// The thread blocks SIGPIPE: writes into a child's standard input are made here, so a child
/// that exited turns them into `EPIPE` errors rather than a signal that stops the process.
final class IOWatcher: Sendable {
  /// The process's watcher, made (with its thread) on first use. A failure (no descriptor or
  /// thread to be had) is thrown to that caller and tried again by the next.
  static func shared() throws(CoSystemError) -> IOWatcher {
    try sharedWatcher.withCriticalSection { watcher throws(CoSystemError) -> IOWatcher in
      if let watcher { return watcher }
      let made = try IOWatcher()
      watcher = made
      return made
    }
  }

  private static let sharedWatcher = InlineMutex<IOWatcher?>(nil)

  private struct State {
    var clients: [UInt64: any WatcherClient] = [:]
    var nextToken: UInt64 = 1
    /// Tokens of children whose exit is checked by polling.
    var polled: Set<UInt64> = []
  }

  private let poller: Int32
  /// The read end of a pipe that wakes the thread when polling starts (token 0).
  private let wakeReader: Int32
  private let wakeWriter: Int32
  private let state = InlineMutex(State())

  private init() throws(CoSystemError) {
    poller = cov_poller_create()
    if poller < 0 { throw CoSystemError(operation: "epoll_create1", path: "", code: errno) }
    var wake: [Int32] = [-1, -1]
    let error = cov_pipe(&wake, 1, 1)
    if error != 0 {
      _ = systemClose(poller)
      throw CoSystemError(operation: "pipe", path: "", code: error)
    }
    (wakeReader, wakeWriter) = (wake[0], wake[1])
    _ = cov_poller_arm(poller, wakeReader, 0, 0)
    // The thread holds the watcher for good: the process has one, for its whole life.
    let context = UnsafeRetainedBits(retaining: self)
    let started = cov_thread_start(
      { context in
        UnsafeRetainedBits<IOWatcher>(unsafeContext: context).take().run()
      }, context.unsafeContext, "cov-watcher", 1)
    if started != 0 {
      context.release()
      for fd in [poller, wakeReader, wakeWriter] { _ = systemClose(fd) }
      throw CoSystemError(operation: "pthread_create", path: "", code: started)
    }
  }

  // MARK: Clients

  /// Registers `client`; returns the token its descriptors are armed with.
  func register(_ client: any WatcherClient) -> UInt64 {
    state.withCriticalSection { state in
      let token = state.nextToken
      state.nextToken += 1
      state.clients[token] = client
      return token
    }
  }

  /// Forgets the client of `token`: later events for it are dropped.
  func unregister(_ token: UInt64) {
    _ = state.withCriticalSection { state in
      state.polled.remove(token)
      return state.clients.removeValue(forKey: token)
    }
  }

  /// Arms `fd` for one readiness event (readable, or writable with `forWriting`) for `token`'s
  /// client. Returns 0 or an errno value.
  func arm(_ fd: Int32, forWriting: Bool, token: UInt64) -> Int32 {
    cov_poller_arm(poller, fd, forWriting ? 1 : 0, token)
  }

  /// Stops watching `fd` (call before closing it).
  func forget(_ fd: Int32) { _ = cov_poller_forget(poller, fd) }

  /// Arms one event for the exit of child `pid` (through `pidfd` if it is not -1), for
  /// `token`'s client; without a pidfd on Linux, the exit is polled. Returns 0, or ESRCH when
  /// the child has exited already (tell the client now).
  func armExit(pid: pid_t, pidfd: Int32, token: UInt64) -> Int32 {
    #if os(Linux)
      if pidfd < 0 {
        let first = state.withCriticalSection { state -> Bool in
          defer { state.polled.insert(token) }
          return state.polled.isEmpty
        }
        if first { wake() }
        return 0
      }
    #endif
    return cov_poller_arm_exit(poller, pid, pidfd, token)
  }

  /// Stops watching the exit of `pid` / `pidfd`.
  func forgetExit(pid: pid_t, pidfd: Int32) {
    if pidfd >= 0 || !isLinux { cov_poller_forget_exit(poller, pid, pidfd) }
  }

  private var isLinux: Bool {
    #if os(Linux)
      return true
    #else
      return false
    #endif
  }

  /// Interrupts the thread's wait (to start polling).
  private func wake() {
    var byte: UInt8 = 1
    _ = write(wakeWriter, &byte, 1)
  }

  // MARK: The thread

  private func run() {
    let capacity = 64
    let events = UnsafeMutablePointer<cov_poll_event_t>.allocate(capacity: capacity)
    while true {
      let polling = state.withCriticalSection { !$0.polled.isEmpty }
      let count = cov_poller_wait(poller, events, Int32(capacity), polling ? 50 : -1)
      for index in 0..<Int(max(count, 0)) {
        let event = events[index]
        if event.token == 0 {
          drainWakePipe()
          continue
        }
        let client = state.withCriticalSection { $0.clients[event.token] }
        client?.watcherEvent(event.flags)
      }
      if polling {
        let polled = state.withCriticalSection { state in
          state.polled.compactMap { state.clients[$0] }
        }
        for child in polled { child.watcherEvent(UInt32(COV_POLL_EXITED)) }
      }
    }
  }

  private func drainWakePipe() {
    var bytes = (UInt64(0), UInt64(0))
    while withUnsafeMutableBytes(of: &bytes, { read(wakeReader, $0.baseAddress, $0.count) }) > 0 {}
    _ = cov_poller_arm(poller, wakeReader, 0, 0)
  }
}
