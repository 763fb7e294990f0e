import Dispatch

extension CoProcess {
  /// What `run` returns: how the child ended and everything it wrote.
  public struct Output: Sendable, Hashable {
    /// How the child ended.
    public var status: ExitStatus
    /// Everything the child wrote to its standard output.
    public var standardOutput: [UInt8]
    /// Everything the child wrote to its standard error.
    public var standardError: [UInt8]

    /// An output with these parts.
    public init(status: ExitStatus, standardOutput: [UInt8], standardError: [UInt8]) {
      self.status = status
      self.standardOutput = standardOutput
      self.standardError = standardError
    }
  }

  /// Runs `executable` with `arguments` to the end: feeds it `input` (or /dev/null), collects
  /// its standard output and error, and returns them with its exit status once it has exited
  /// and closed both. The calling coroutine is suspended meanwhile (outside a coroutine, the
  /// thread blocks).
  ///
  /// ```swift
  /// let listing = try CoProcess.run("ls", arguments: ["-l"], workingDirectory: "/tmp")
  /// if listing.status == .exited(0) {
  ///   print(String(decoding: listing.standardOutput, as: UTF8.self))
  /// }
  /// ```
  ///
  /// The output is kept in memory whole (use `start` and its lines for a large output), and
  /// the call returns when both pipes are closed: a child that leaves a process of its own
  /// holding them (a daemon) keeps it waiting. Cancelling the coroutine terminates the child
  /// (SIGTERM, then SIGKILL after `terminationGracePeriod`), drops its output and throws at
  /// once; the child is reaped when it goes.
  ///
  /// - Parameters: as for `start`; `input`, the bytes written to the child's standard input
  ///   before it is closed (`nil`: the child reads /dev/null). A child that exits without
  ///   reading all of its input is not an error.
  /// - Throws: what `start` throws; `CoroutineError.canceled`; `CoSystemError` (`waitpid`,
  ///   `ECHILD`) if something else reaped the child.
  public static func run(
    _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
    workingDirectory: String? = nil, input: [UInt8]? = nil,
    terminationGracePeriod: DispatchTimeInterval = .seconds(5)
  ) throws -> Output {
    let watcher = try IOWatcher.shared()
    let launched = try ProcessSpawn.launch(
      executable, arguments: arguments, environment: environment,
      workingDirectory: workingDirectory, pipingInput: input != nil)
    let parts = ProcessRunCompletion(parts: 3)  // both outputs ended, the child reaped
    let child = ChildProcess(pid: launched.pid, executable: launched.path, watcher: watcher)
    let output = OutputCollector(fd: launched.output, path: launched.path, watcher: watcher) {
      parts.partEnded()
    }
    let errors = OutputCollector(fd: launched.errors, path: launched.path, watcher: watcher) {
      parts.partEnded()
    }
    let feeder =
      launched.input < 0
      ? nil : PipeWriter(fd: launched.input, path: launched.path, watcher: watcher)
    _ = child.whenExited { _ in parts.partEnded() }
    if let feeder, let input {
      feeder.startWriting(input) { _ in feeder.close() }  // EPIPE: the child read no more
    }
    output.start()
    errors.start()
    do {
      try SystemWaiter.wait(
        detail: metadataBits(CoProcess.self), register: parts.setWaiter,
        withdraw: parts.removeWaiter)
    } catch {
      child.terminate(gracePeriod: terminationGracePeriod)
      // Once the child is gone nobody wants its output: close the pipes even if a process it
      // started still holds their other ends.
      _ = child.whenExited { _ in
        output.close()
        errors.close()
        feeder?.close()
      }
      throw error
    }
    feeder?.close()
    return Output(
      status: try child.outcome.unsafelyUnwrapped.get(), standardOutput: output.take(),
      standardError: errors.take())
  }
}

/// Counts the parts of a `run` that must end before it returns, and resumes its waiter when
/// the last one does.
final class ProcessRunCompletion: Sendable {
  private let state: InlineMutex<(remaining: Int, waiter: SystemWaiter?)>

  init(parts: Int) { state = InlineMutex((parts, nil)) }

  func partEnded() {
    state.withCriticalSection { state -> SystemWaiter? in
      state.remaining -= 1
      guard state.remaining == 0 else { return nil }
      defer { state.waiter = nil }
      return state.waiter
    }?.resume()
  }

  func setWaiter(_ waiter: SystemWaiter) {
    let done = state.withCriticalSection { state -> Bool in
      if state.remaining == 0 { return true }
      state.waiter = waiter
      return false
    }
    if done { waiter.resume() }
  }

  func removeWaiter() {
    state.withCriticalSection { $0.waiter = nil }
  }
}
