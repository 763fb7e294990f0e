import Dispatch

/// A child process, awaited from coroutines: `run` collects its output and exit status,
/// `start` returns a handle to stream its output line by line, feed its input, and wait for it.
///
/// ```swift
/// DispatchQueue.main.startCoroutine {
///   let result = try CoProcess.run("git", arguments: ["rev-parse", "HEAD"])
///   guard result.status.isSuccess else { return }
///   label.text = String(decoding: result.standardOutput, as: UTF8.self)
///
///   let tail = try CoProcess.start("tail", arguments: ["-f", "/var/log/app.log"])
///   for line in tail.standardOutputLines where line.contains("ERROR") { report(line) }
/// }
/// ```
///
/// - **No thread per child or pipe.** One watcher thread (`epoll` on Linux, `kqueue` on Apple
///   platforms) waits for every child's exit (through a pidfd on Linux 5.3 and later, polled
///   every 50 ms where there is none) and every pipe that someone waits on. Awaiting coroutines
///   are suspended; outside coroutines the calling thread blocks.
/// - **Back-pressure.** `standardOutputLines` and `standardErrorLines` read their pipe only
///   while the iteration asks for a line: a consumer that stops reading stops the pipe, and the
///   child blocks in `write` once the pipe's buffer (64 KiB on Linux) is full. Memory stays at
///   one chunk and one line per stream.
/// - **Cancellation.** Cancelling a coroutine awaiting `run` or `wait()` sends the child
///   SIGTERM, then SIGKILL if it is still there after `terminationGracePeriod`, and the await
///   throws `CoroutineError.canceled` at once, without waiting for the child to go. A cancelled
///   read of lines or write of input just ends (see ``CoLines``).
/// - **Reaping.** Every child is reaped as soon as it exits, whether anyone waits for it or
///   not, so none is left a zombie. Releasing a handle does not stop its child: its standard
///   input is closed (the child reads the end of its input), its output pipes are closed once
///   their line sequences are released too (a child that writes more gets SIGPIPE), and it is
///   reaped whenever it exits. Call `terminate()` to stop it.
/// - **Starting.** `posix_spawn` (not `fork`); an executable without a `/` is searched in the
///   directories of this process's `PATH` (a `PATH` in `environment` is the child's, not used
///   for the search), one with a `/` is taken as is (relative to `workingDirectory` if given).
///   The child gets default dispositions for every signal and an empty signal mask (so an
///   ignored SIGPIPE of this process is not inherited), and only its three standard
///   descriptors: every descriptor Covenant opens is close-on-exec, and on Apple platforms and
///   glibc 2.34 and later every other descriptor of this process is kept out too.
/// - **Status.** ``ExitStatus``: `.exited(code)` when the child returned or called `exit`,
///   `.signaled(signal)` when a signal ended it (the shell's `128 + signal` is not used).
///
/// Processes run on Linux and macOS; on iOS, tvOS, watchOS and visionOS, where applications
/// cannot start any, `run` and `start` throw `posix_spawn` `ENOSYS`.
public final class CoProcess: @unchecked Sendable {
  /// The child's process id (reused by the system once the child is reaped).
  public let processIdentifier: Int32

  /// The executable that runs: the path found in `PATH`, or the one given.
  public let executablePath: String

  /// How long `terminate()` and a cancelled `wait()` give the child between SIGTERM and
  /// SIGKILL.
  public let terminationGracePeriod: DispatchTimeInterval

  /// The lines the child writes to its standard output, read as the iteration asks for them
  /// (single pass; see ``CoLines``).
  public let standardOutputLines: CoLines

  /// The lines the child writes to its standard error (single pass; see ``CoLines``). Read it
  /// too, or from another coroutine, if the child writes much there: a full pipe stops it.
  public let standardErrorLines: CoLines

  private let input: PipeWriter
  private let child: ChildProcess

  /// For tests: children started while it is set get no pidfd, and their exits are polled, as
  /// on a kernel before 5.3 or under a seccomp filter that refuses `pidfd_open`.
  package static let pollsExits = InlineAtomic<Bool>(false)

  init(
    child: ChildProcess, input: PipeWriter, output: CoLines, errors: CoLines,
    terminationGracePeriod: DispatchTimeInterval
  ) {
    self.child = child
    self.input = input
    processIdentifier = child.pid
    executablePath = child.executable
    standardOutputLines = output
    standardErrorLines = errors
    self.terminationGracePeriod = terminationGracePeriod
  }

  // The watcher holds the pipe ends while they are registered, so they are closed here, not by
  // their own deinitializers: the child's input now (it reads the end of it), its outputs when
  // their line sequences are released.
  deinit { input.close() }

  /// Starts `executable` with `arguments` and returns its handle at once, its standard input,
  /// output and error connected to the handle.
  ///
  /// ```swift
  /// let sort = try CoProcess.start("sort")
  /// try sort.write(toStandardInput: "pear\napple\n")
  /// sort.closeStandardInput()
  /// let sorted = Array(sort.standardOutputLines)     // ["apple", "pear"]
  /// let status = try sort.wait()                     // .exited(0)
  /// ```
  ///
  /// - Parameters:
  ///   - executable: a path, or a name searched in `PATH` (see the type's notes).
  ///   - arguments: the arguments after the program name (`argv[0]` is `executable`).
  ///   - environment: the child's whole environment; `nil` for this process's.
  ///   - workingDirectory: the child's current directory; `nil` for this process's.
  ///   - terminationGracePeriod: between SIGTERM and SIGKILL (5 seconds by default; `.never`:
  ///     no SIGKILL).
  ///   - maxLineLength: the longest line of output accepted (see ``CoLines``).
  /// - Throws: `CoSystemError`: `posix_spawn` with `ENOENT` for an executable that is not
  ///   found, `EACCES` for one that may not be run; `chdir` for a working directory that is
  ///   not one; `pipe` when descriptors run out.
  public static func start(
    _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
    workingDirectory: String? = nil, terminationGracePeriod: DispatchTimeInterval = .seconds(5),
    maxLineLength: Int = CoLines.defaultMaxLineLength
  ) throws -> CoProcess {
    let watcher = try IOWatcher.shared()
    let child = try ProcessSpawn.launch(
      executable, arguments: arguments, environment: environment,
      workingDirectory: workingDirectory, pipingInput: true)
    let chunk = 64 << 10
    return CoProcess(
      child: ChildProcess(pid: child.pid, executable: child.path, watcher: watcher),
      input: PipeWriter(fd: child.input, path: child.path, watcher: watcher),
      output: CoLines(
        chunkSize: chunk, maxLineLength: maxLineLength,
        source: PipeReader(fd: child.output, path: child.path, watcher: watcher)),
      errors: CoLines(
        chunkSize: chunk, maxLineLength: maxLineLength,
        source: PipeReader(fd: child.errors, path: child.path, watcher: watcher)),
      terminationGracePeriod: terminationGracePeriod)
  }

  /// Writes `bytes` to the child's standard input, suspending the calling coroutine (or
  /// blocking the thread) until the child's pipe has taken them all: a child that does not
  /// read holds the writer back.
  ///
  /// - Throws: `CoSystemError` (`write`, `EPIPE`) once the child has closed its input or
  ///   exited, or after `closeStandardInput()`; `CoroutineError.canceled` (what was written
  ///   stays written; the child is not terminated).
  public func write(toStandardInput bytes: [UInt8]) throws {
    try input.write(bytes)
  }

  /// Writes `text` (as UTF-8) to the child's standard input; see `write(toStandardInput:)`.
  public func write(toStandardInput text: String) throws {
    try input.write(Array(text.utf8))
  }

  /// Closes the child's standard input: it reads the end of its input (what `sort` or `cat`
  /// wait for before they finish).
  public func closeStandardInput() {
    input.close()
  }

  /// Waits for the child to exit and returns how it ended; returns at once if it has.
  ///
  /// Cancelling the waiting coroutine terminates the child (SIGTERM, then SIGKILL after
  /// `terminationGracePeriod`; it is reaped when it goes) and throws at once.
  ///
  /// - Throws: `CoroutineError.canceled`; `CoSystemError` (`waitpid`, `ECHILD`) if something
  ///   else in this process reaped the child first (a `waitpid(-1)`, or SIGCHLD ignored).
  public func wait() throws -> ExitStatus {
    var observer: UInt64?
    do {
      try SystemWaiter.wait(
        detail: metadataBits(CoProcess.self),
        register: { waiter in observer = child.whenExited { _ in waiter.resume() } },
        withdraw: { if let observer { child.removeObserver(observer) } })
    } catch {
      terminate()
      throw error
    }
    return try child.outcome.unsafelyUnwrapped.get()
  }

  /// How the child ended, or `nil` while it runs (or if it was reaped by someone else).
  public var exitStatus: ExitStatus? { try? child.outcome?.get() }

  /// Asks the child to stop: SIGTERM now, SIGKILL after `terminationGracePeriod` if it has
  /// not exited by then. Does nothing once it has exited. `wait()` tells how it ended.
  public func terminate() {
    child.terminate(gracePeriod: terminationGracePeriod)
  }
}
