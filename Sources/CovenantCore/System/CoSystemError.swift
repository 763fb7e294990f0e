import CCoroutineContext
import CCovenantShims

/// A system call of `CoFile`, `CoProcess` or `BlockingPool` failed: which call, on which path,
/// and the `errno` it set, by number and by name.
///
/// ```swift
/// do {
///   let bytes = try CoFile.read(atPath: "/etc/missing.conf")
/// } catch let error as CoSystemError where error.name == "ENOENT" {
///   print(error)   // open("/etc/missing.conf"): ENOENT (No such file or directory)
/// }
/// ```
///
/// `code` is the platform's `errno` value (compare it with `ENOENT`, `EACCES`, … of `Glibc` or
/// `Darwin`); `name` is its symbolic name, the same on every platform.
public struct CoSystemError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The call that failed: `open`, `read`, `write`, `fsync`, `rename`, `posix_spawn`,
  /// `waitpid`, … (or what was being done, such as `read line`).
  public var operation: String
  /// The file, directory or executable the call was about.
  public var path: String
  /// The `errno` value.
  public var code: Int32

  /// An error for `operation` on `path` with `errno` value `code`.
  public init(operation: String, path: String, code: Int32) {
    self.operation = operation
    self.path = path
    self.code = code
  }

  /// The symbolic name of `code` (`"ENOENT"`, `"EACCES"`, …), or `"errno N"` for a value
  /// without one.
  public var name: String {
    cov_errno_name(code).map { String(cString: $0) } ?? "errno \(code)"
  }

  /// The system's description of `code` ("No such file or directory").
  public var reason: String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
      cov_errno_describe(code, buffer.baseAddress, buffer.count)
      return String(cString: buffer.baseAddress.unsafelyUnwrapped)
    }
  }

  /// `operation("path"): NAME (reason)`, e.g. `open("/tmp/x"): ENOENT (No such file or
  /// directory)`.
  public var description: String {
    "\(operation)(\"\(path)\"): \(name) (\(reason))"
  }
}
