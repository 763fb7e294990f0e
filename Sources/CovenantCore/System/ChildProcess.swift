import CCoroutineContext
import CCovenantShims
import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One child process as the watcher sees it: its exit, reaping, and termination.
///
/// The watcher holds it (as a registered client) from the spawn until the child is reaped, so
/// every child is reaped when it exits, whether or not anyone waits for it and whatever became
/// of its `CoProcess`: no zombie is left behind.
///
/// Signals are sent under the same lock as the reap, and only before it: while a child is not
/// reaped its pid cannot be given to another process, so a late `terminate()` or the SIGKILL of
/// a grace period can never hit an unrelated process.
final class ChildProcess: WatcherClient, @unchecked Sendable {
  typealias Outcome = Result<CoProcess.ExitStatus, CoSystemError>

  let pid: pid_t
  /// What errors name.
  let executable: String
  private let watcher: IOWatcher
  /// Readable once the child exits (Linux 5.3+); -1 elsewhere or where refused.
  private let pidfd: Int32
  /// The watcher's token for this child; written once, before the exit is armed.
  private var token: UInt64 = 0

  private struct State {
    var outcome: Outcome?
    var observers: [(id: UInt64, callback: @Sendable (Outcome) -> Void)] = []
    var nextObserver: UInt64 = 0
    /// Set once termination is asked for: SIGTERM was sent, the SIGKILL timer armed.
    var terminating = false
    var killTimer: (any CoroutineTimer)?
  }

  private let state = InlineMutex(State())

  /// Takes charge of child `pid`, just spawned: arms the watcher for its exit.
  init(pid: pid_t, executable: String, watcher: IOWatcher) {
    self.pid = pid
    self.executable = executable
    self.watcher = watcher
    pidfd = CoProcess.pollsExits.load(ordering: .relaxed) ? -1 : cov_pidfd_open(pid)
    token = watcher.register(self)
    if watcher.armExit(pid: pid, pidfd: pidfd, token: token) != 0 {
      reapIfExited()  // ESRCH: already gone (Apple platforms); anything else: try anyway
    }
  }

  /// The exit status, once the child has exited and been reaped.
  var outcome: Outcome? { state.withCriticalSection { $0.outcome } }

  /// Calls `callback` with the outcome once the child is reaped (at once, on this thread, if it
  /// is already). Returns an id for `removeObserver`, or `nil` if it was called already.
  func whenExited(_ callback: @escaping @Sendable (Outcome) -> Void) -> UInt64? {
    let id = state.withCriticalSection { state -> UInt64? in
      if state.outcome != nil { return nil }  // reaped already: called below
      state.nextObserver += 1
      state.observers.append((state.nextObserver, callback))
      return state.nextObserver
    }
    if let id { return id }
    callback(outcome.unsafelyUnwrapped)
    return nil
  }

  /// Forgets an observer (its waiter gave up).
  func removeObserver(_ id: UInt64) {
    state.withCriticalSection { $0.observers.removeAll { $0.id == id } }
  }

  // MARK: Exit

  func watcherEvent(_ flags: UInt32) { reapIfExited() }

  /// Reaps the child if it has exited, then tells the observers and lets the watcher forget
  /// it; otherwise (a poll, or a wake-up that came early) waits for the next event.
  private func reapIfExited() {
    let reaped = state.withCriticalSection { state -> (any CoroutineTimer)?? in
      guard state.outcome == nil else { return nil }
      var code: Int32 = 0
      var signal: Int32 = 0
      switch cov_reap(pid, &code, &signal) {
      case 0: return nil
      case 1: state.outcome = .success(signal != 0 ? .signaled(signal) : .exited(code))
      default:
        state.outcome = .failure(CoSystemError(operation: "waitpid", path: executable, code: errno))
      }
      defer { state.killTimer = nil }
      return .some(state.killTimer)
    }
    guard let reaped else {
      if pidfd >= 0 { _ = watcher.armExit(pid: pid, pidfd: pidfd, token: token) }
      return
    }
    reaped?.cancel()
    watcher.forgetExit(pid: pid, pidfd: pidfd)
    if pidfd >= 0 { close(pidfd) }
    let (outcome, observers) = state.withCriticalSection { state in
      defer { state.observers = [] }
      return (state.outcome.unsafelyUnwrapped, state.observers)
    }
    for observer in observers { observer.callback(outcome) }
    watcher.unregister(token)
  }

  // MARK: Termination

  /// Sends SIGTERM now and SIGKILL after `gracePeriod` if the child is still there then
  /// (`.never`: no SIGKILL). Does nothing once the child is reaped; a second call sends SIGTERM
  /// again but arms no second timer.
  func terminate(gracePeriod: DispatchTimeInterval) {
    let armTimer = state.withCriticalSection { state -> Bool in
      guard state.outcome == nil else { return false }
      kill(pid, SIGTERM)
      defer { state.terminating = true }
      return !state.terminating
    }
    guard armTimer, gracePeriod.clampedNanoseconds != nil else { return }
    let timer = DispatchTimer.schedule(after: gracePeriod, on: .global()) { [self] in
      send(SIGKILL)
    }
    let stillRunning = state.withCriticalSection { state -> Bool in
      guard state.outcome == nil else { return false }
      state.killTimer = timer
      return true
    }
    if !stillRunning { timer.cancel() }
  }

  /// Sends `signal` if the child has not been reaped.
  func send(_ signal: Int32) {
    state.withCriticalSection { state in
      if state.outcome == nil { kill(pid, signal) }
    }
  }
}
