/// The parent's end of one of a child's pipes, registered with the watcher: what
/// `PipeReader`, `PipeWriter` and `OutputCollector` share. Each arms the descriptor for the one
/// event it needs (one-shot) and handles it in `watcherEvent`, on the watcher's thread.
///
/// `@unchecked Sendable`: its own fields are immutable once made (`token` is set in `init`,
/// before the descriptor can be armed); subclasses say how they guard theirs.
class WatchedPipe: WatcherClient, @unchecked Sendable {
  /// The child's executable, for errors.
  let path: String
  let fd: Int32
  let watcher: IOWatcher
  private(set) var token: UInt64 = 0

  /// Takes charge of `fd` (non-blocking), registering with `watcher`.
  init(fd: Int32, path: String, watcher: IOWatcher) {
    self.fd = fd
    self.path = path
    self.watcher = watcher
    token = watcher.register(self)
  }

  /// Handles the event the descriptor was armed for (nothing here).
  func watcherEvent(_ flags: UInt32) {}

  /// Arms the descriptor for one event: readable, or writable with `forWriting`. False if it
  /// cannot be watched (never expected: the caller then ends what it was doing rather than
  /// wait for an event that will not come).
  func arm(forWriting: Bool) -> Bool {
    watcher.arm(fd, forWriting: forWriting, token: token) == 0
  }

  /// Stops watching the descriptor and closes it. Called once (each subclass keeps a flag).
  func forgetAndClose() {
    watcher.unregister(token)
    watcher.forget(fd)
    _ = systemClose(fd)
  }
}
