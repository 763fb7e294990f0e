#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The blocking file calls behind `CoFile`, each run whole on a pool thread: retried on
/// `EINTR`, failing with a `CoSystemError` that names the caller's path.
enum PosixFile {
  /// Opens `path` with `flags` (close-on-exec added), creating it with `mode` (less the umask)
  /// when `flags` has `O_CREAT`.
  static func open(
    _ path: String, _ flags: Int32, mode: mode_t = 0o666, reportedPath: String? = nil
  ) throws(CoSystemError) -> Int32 {
    while true {
      let fd = path.withCString { systemOpen($0, flags | O_CLOEXEC, mode) }
      if fd >= 0 { return fd }
      if errno != EINTR {
        throw CoSystemError(operation: "open", path: reportedPath ?? path, code: errno)
      }
    }
  }

  /// Closes `fd`; a failure (EIO: data that could not be written back) is thrown.
  static func close(_ fd: Int32, path: String) throws(CoSystemError) {
    // Not retried on EINTR: the descriptor is gone whatever close returned (Linux, POSIX 2024).
    if systemClose(fd) != 0 && errno != EINTR {
      throw CoSystemError(operation: "close", path: path, code: errno)
    }
  }

  /// Reads at most `count` bytes into `buffer`; 0 at the end of the file.
  static func read(
    _ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, path: String
  ) throws(CoSystemError) -> Int {
    let n = readOrError(fd, into: buffer, count: count)
    if n < 0 { throw CoSystemError(operation: "read", path: path, code: -Int32(n)) }
    return n
  }

  /// Reads at most `count` bytes into `buffer`: how many (0 at the end), or minus `errno`.
  static func readOrError(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
    while true {
      let n = systemRead(fd, buffer, count)
      if n >= 0 || errno != EINTR { return n >= 0 ? n : -Int(errno) }
    }
  }

  /// Reads the whole of `fd`: a regular file in one read of its size (its size when this
  /// starts: bytes appended meanwhile are not waited for), anything else (a pipe, a file of
  /// `/proc` whose size says 0) until the end.
  static func readAll(_ fd: Int32, path: String) throws(CoSystemError) -> [UInt8] {
    var status = stat()
    guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 else {
      return try readToEnd(fd, path: path)
    }
    return try [UInt8](unsafeUninitializedCapacity: Int(status.st_size)) {
      (buffer, count) throws(CoSystemError) in
      count = 0
      while count < buffer.count {
        let n = try read(
          fd, into: buffer.baseAddress! + count, count: buffer.count - count, path: path)
        if n == 0 { break }
        count += n
      }
    }
  }

  /// Reads `fd` to its end, whatever its size says (a pipe, a file of `/proc`).
  private static func readToEnd(_ fd: Int32, path: String) throws(CoSystemError) -> [UInt8] {
    let chunkSize = 64 << 10
    let bytes = ByteAccumulator(capacity: chunkSize)
    while true {
      let count = try read(fd, into: bytes.reserve(chunkSize), count: chunkSize, path: path)
      if count == 0 { return bytes.takeBytes() }
      bytes.commit(count)
    }
  }

  /// Writes all of `bytes`, in as many calls as the system needs.
  static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(CoSystemError) {
    let failure = bytes.withUnsafeBytes { all -> Int32 in
      var offset = 0
      while offset < all.count {
        let n = systemWrite(fd, all.baseAddress! + offset, all.count - offset)
        if n >= 0 {
          offset += n
        } else if errno != EINTR {
          return errno
        }
      }
      return 0
    }
    if failure != 0 { throw CoSystemError(operation: "write", path: path, code: failure) }
  }

  /// Opens (creating) `path` for writing with `flags` added (`O_TRUNC`, `O_APPEND`), writes
  /// all of `bytes` and closes it.
  static func write(_ bytes: [UInt8], toPath path: String, flags: Int32) throws(CoSystemError) {
    let fd = try open(path, O_WRONLY | O_CREAT | flags)
    do throws(CoSystemError) {
      try writeAll(fd, bytes, path: path)
    } catch {
      try? close(fd, path: path)
      throw error
    }
    try close(fd, path: path)
  }

  /// Flushes `fd`'s data to the device.
  static func sync(_ fd: Int32, path: String) throws(CoSystemError) {
    while fsync(fd) != 0 {
      if errno != EINTR { throw CoSystemError(operation: "fsync", path: path, code: errno) }
    }
  }

  /// The directory holding `path` and the file's name in it (`.` for a bare name).
  static func split(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let directory = path[..<slash]
    return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
  }
}

// The C library's calls under names of their own, for the types of the system layer whose
// methods of the same names (`open`, `close`, `read`, `write`) would hide them.
func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
  open(path, flags, mode)
}
func systemClose(_ fd: Int32) -> Int32 { close(fd) }
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  read(fd, buffer, count)
}
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
  write(fd, buffer, count)
}
