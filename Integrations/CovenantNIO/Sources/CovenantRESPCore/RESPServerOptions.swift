#if canImport(Glibc)
  import Glibc
#else
  import Darwin
#endif

/// The command line both RESP servers take: `--host` (default 127.0.0.1), `--port` (default
/// 6379; 0: any free port) and `--threads` (event loops; default: the number of cores).
public struct RESPServerOptions: Sendable {
  /// The address to listen on.
  public var host = "127.0.0.1"
  /// The port to listen on; 0 lets the system choose.
  public var port = 6379
  /// The number of event-loop threads.
  public var threads: Int

  /// The options in `arguments` (the program's name first); on a bad or unknown flag, prints the
  /// usage of `program` to standard error and exits with status 2.
  public init(_ arguments: [String], program: String, defaultThreads: Int) {
    threads = defaultThreads
    var remaining = arguments.dropFirst()
    func fail(_ message: String) -> Never {
      let text =
        "\(program): \(message)\nusage: \(program) [--host ADDRESS] [--port PORT] [--threads N]\n"
      _ = text.withCString { write(2, $0, strlen($0)) }
      exit(2)
    }
    while let flag = remaining.popFirst() {
      guard let value = remaining.popFirst() else { fail("\(flag) needs a value") }
      switch flag {
      case "--host": host = value
      case "--port":
        guard let port = Int(value), (0...65535).contains(port) else { fail("bad port \(value)") }
        self.port = port
      case "--threads":
        guard let threads = Int(value), threads > 0 else { fail("bad thread count \(value)") }
        self.threads = threads
      default: fail("unknown flag \(flag)")
      }
    }
  }

  /// Prints `listening on PORT` as the first line of standard output and flushes it: scripts
  /// wait for that line and read the port from it.
  public static func announce(port: Int) {
    print("listening on \(port)")
    fflush(nil)  // all streams: `stdout` itself is a global Swift 6 will not touch
  }
}
