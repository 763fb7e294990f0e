import CCoroutineContext
import CCovenantShims

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Starting a child: finding the executable, the pipes, and `posix_spawn` (never `fork`: a
/// forked copy of a multithreaded process may only call async-signal-safe functions, and
/// copying the page tables of a large process costs milliseconds).
enum ProcessSpawn {
  /// The executable to run for `executable`: itself if it contains a `/` (relative to the
  /// working directory the child gets), else the first executable regular file of that name
  /// in the directories of this process's `PATH` (`/usr/bin:/bin` when it is unset), as a
  /// shell would.
  static func resolve(_ executable: String) throws(CoSystemError) -> String {
    if executable.contains("/") { return executable }
    guard !executable.isEmpty else {
      throw CoSystemError(operation: "posix_spawn", path: executable, code: ENOENT)
    }
    let searchPath = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    var denied = false
    for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
      let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + executable
      var status = stat()
      guard stat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
      if access(candidate, X_OK) == 0 { return candidate }
      denied = true
    }
    throw CoSystemError(operation: "posix_spawn", path: executable, code: denied ? EACCES : ENOENT)
  }

  /// A started child: its pid, the executable found, and the parent's ends of its standard
  /// streams (non-blocking; `input` is -1 when the child reads /dev/null).
  struct Launched {
    let pid: pid_t
    let path: String
    let input: Int32
    let output: Int32
    let errors: Int32
  }

  /// Starts `executable` (see `resolve`) with pipes for its standard output and error, and for
  /// its standard input when `pipingInput` (else it reads /dev/null). The child's ends of the
  /// pipes are closed here once the child has its copies: held open by the parent, they would
  /// keep the pipes from ever ending. On failure nothing stays open.
  static func launch(
    _ executable: String, arguments: [String], environment: [String: String]?,
    workingDirectory: String?, pipingInput: Bool
  ) throws(CoSystemError) -> Launched {
    let path = try resolve(executable)
    var parentEnds: [Int32] = []
    var childEnds: [Int32] = []
    defer { for fd in childEnds { _ = systemClose(fd) } }
    do throws(CoSystemError) {
      var input: (parent: Int32, child: Int32) = (-1, -1)
      if pipingInput {
        input = try pipe(parentReads: false, path: path)
        parentEnds.append(input.parent)
        childEnds.append(input.child)
      }
      let output = try pipe(parentReads: true, path: path)
      parentEnds.append(output.parent)
      childEnds.append(output.child)
      let errors = try pipe(parentReads: true, path: path)
      parentEnds.append(errors.parent)
      childEnds.append(errors.child)
      let pid = try spawn(
        path, executable: executable, arguments: arguments, environment: environment,
        workingDirectory: workingDirectory, stdin: input.child, stdout: output.child,
        stderr: errors.child)
      return Launched(
        pid: pid, path: path, input: input.parent, output: output.parent, errors: errors.parent)
    } catch {
      for fd in parentEnds { _ = systemClose(fd) }
      throw error
    }
  }

  /// A pipe for a child's standard stream: the parent's end non-blocking, the child's end
  /// blocking (as programs expect), both close-on-exec and numbered 3 or above.
  private static func pipe(parentReads: Bool, path: String) throws(CoSystemError) -> (
    parent: Int32, child: Int32
  ) {
    var fds: [Int32] = [-1, -1]
    let error = cov_pipe(&fds, parentReads ? 1 : 0, parentReads ? 0 : 1)
    if error != 0 { throw CoSystemError(operation: "pipe", path: path, code: error) }
    return parentReads ? (fds[0], fds[1]) : (fds[1], fds[0])
  }

  /// Spawns `path` with `arguments` (after `argv[0]`, which is `executable` as given), in
  /// `environment` (this process's when `nil`) and `workingDirectory`, with the given standard
  /// descriptors (`stdin` -1: /dev/null). Returns the child's pid.
  private static func spawn(
    _ path: String, executable: String, arguments: [String], environment: [String: String]?,
    workingDirectory: String?, stdin: Int32, stdout: Int32, stderr: Int32
  ) throws(CoSystemError) -> pid_t {
    if let workingDirectory {
      // Checked here so that the error names the directory: the child's failed `chdir` would
      // come back from `posix_spawn` as a bare ENOENT.
      var status = stat()
      if stat(workingDirectory, &status) != 0 {
        throw CoSystemError(operation: "chdir", path: workingDirectory, code: errno)
      }
      if status.st_mode & S_IFMT != S_IFDIR {
        throw CoSystemError(operation: "chdir", path: workingDirectory, code: ENOTDIR)
      }
    }
    var pid: pid_t = 0
    let argv = CStringArray([executable] + arguments)
    let envp = environment.map { CStringArray($0.map { "\($0.key)=\($0.value)" }) }
    let error = argv.withPointers { argv in
      let spawn = { (envp: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32 in
        if let workingDirectory {
          return workingDirectory.withCString {
            cov_spawn(&pid, path, argv, envp, $0, stdin, stdout, stderr)
          }
        }
        return cov_spawn(&pid, path, argv, envp, nil, stdin, stdout, stderr)
      }
      guard let envp else { return spawn(cov_environment()) }
      return envp.withPointers(spawn)
    }
    if error != 0 {
      throw CoSystemError(
        operation: "posix_spawn", path: error == ENOSYS ? workingDirectory ?? path : path,
        code: error)
    }
    return pid
  }
}

/// NUL-terminated copies of strings in a NULL-terminated array, as `argv` and `envp` are.
private final class CStringArray {
  private let pointers: [UnsafeMutablePointer<CChar>?]

  init(_ strings: [String]) { pointers = strings.map { strdup($0) } + [nil] }

  deinit { for pointer in pointers { free(pointer) } }

  func withPointers<R>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
  }
}
