#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension CoProcess {
  /// How a child process ended: it exited with a code, or a signal ended it.
  ///
  /// ```swift
  /// switch try process.wait() {
  /// case .exited(0): print("done")
  /// case .exited(let code): print("failed with \(code)")
  /// case .signaled(let signal): print("killed by signal \(signal)")   // SIGTERM: 15
  /// }
  /// ```
  ///
  /// A shell reports a child killed by signal N as status 128 + N; here the two cases are
  /// kept apart, so `.exited(143)` means the child itself called `exit(143)`.
  public enum ExitStatus: Hashable, Sendable, CustomStringConvertible {
    /// The child returned from `main` or called `exit` with this code (0–255).
    case exited(Int32)
    /// A signal ended the child (`SIGTERM`, `SIGKILL`, `SIGSEGV`, …: the platform's number).
    case signaled(Int32)

    /// Whether the child exited with code 0.
    public var isSuccess: Bool { self == .exited(0) }

    /// `exited with code 1`, `killed by signal 15 (SIGTERM)`.
    public var description: String {
      switch self {
      case .exited(let code): return "exited with code \(code)"
      case .signaled(let signal):
        let name = Self.signalNames[signal].map { " (\($0))" } ?? ""
        return "killed by signal \(signal)\(name)"
      }
    }

    private static let signalNames: [Int32: String] = [
      SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL",
      SIGTRAP: "SIGTRAP", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE",
      SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1", SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2",
      SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU",
      SIGXFSZ: "SIGXFSZ",
    ]
  }
}
