import CCoroutineContext

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension CoroutineSnapshot {
  /// Makes `signal` write a dump of every coroutine (``writeDump(to:)``, grouped as
  /// ``dump(groupingIdenticalStacks:)`` groups) to standard error, while the process goes on:
  /// for a server, `kill -USR1 <pid>`.
  ///
  /// ```swift
  /// try CoroutineSnapshot.installDumpSignal()      // at startup; SIGUSR1 by default
  /// ```
  ///
  /// The signal handler itself only writes a byte to a pipe: a thread of Covenant's, started
  /// here and otherwise asleep, reads the registry and writes the dump, in memory that grows
  /// with the number of groups it prints, not with the number of coroutines. Signals that arrive while a
  /// dump is being written give one more dump. The signal's previous disposition is replaced
  /// (choose another signal if the program uses `SIGUSR1`).
  ///
  /// - Throws: ``CoroutineDumpSignalError`` if the signal cannot be handled (an invalid number,
  ///   `SIGKILL`, `SIGSTOP`) or the thread cannot be started.
  public static func installDumpSignal(_ signal: Int32 = SIGUSR1) throws {
    let error = cov_signal_work_install(signal) { CoroutineSnapshot.writeDump(to: 2) }
    if error != 0 { throw CoroutineDumpSignalError(signal: signal, errorNumber: error) }
  }
}

/// Thrown by ``CoroutineSnapshot/installDumpSignal(_:)``.
public struct CoroutineDumpSignalError: Error, CustomStringConvertible {
  /// The signal that was asked for.
  public let signal: Int32
  /// The system's error number (`EINVAL` for a signal that cannot be caught).
  public let errorNumber: Int32

  /// The signal and the system's reason.
  public var description: String {
    "Covenant: cannot dump coroutines on signal \(signal): \(String(cString: strerror(errorNumber)))"
  }
}
