#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension CoFile {
  /// Writes `bytes` as the whole content of the file at `path`, creating it if needed.
  ///
  /// **Atomically** (the default), readers see the old content or the new, never a mix or a
  /// truncated file, even if the process or the machine stops midway: the bytes go to a
  /// temporary file in the same directory (`.name.covenant-PID-N`), which is flushed to disk
  /// (`fsync`), takes the permissions of the file it replaces (or the umask's for a new one),
  /// and is renamed over `path`; the directory is then flushed too (best effort). A failure
  /// removes the temporary file; a process killed midway may leave one behind. The file at
  /// `path` is replaced, not written through: a symbolic link there is replaced by the file,
  /// and the new file belongs to this process's user.
  ///
  /// With `atomically: false`, the file is truncated and written in place (no `fsync`).
  ///
  /// - Throws: `CoSystemError` (`open`, `write`, `fsync`, `fchmod`, `close`, `rename`; the
  ///   path is always `path`), `CoroutineError.canceled`.
  public static func write(_ bytes: [UInt8], toPath path: String, atomically: Bool = true) throws {
    try BlockingPool.shared.await { () throws -> Void in
      if atomically {
        try writeAtomically(bytes, toPath: path)
      } else {
        try PosixFile.write(bytes, toPath: path, flags: O_TRUNC)
      }
    }
  }

  /// Writes `string` (as UTF-8) as the whole content of the file at `path`; see
  /// `write(_:toPath:atomically:)` for bytes.
  public static func write(_ string: String, toPath path: String, atomically: Bool = true) throws {
    try write(Array(string.utf8), toPath: path, atomically: atomically)
  }

  /// Adds `bytes` at the end of the file at `path`, creating it if needed. Each call is one
  /// `O_APPEND` write sequence: concurrent appends of small amounts from several processes do
  /// not overwrite each other (a local file system appends each `write` whole).
  ///
  /// - Throws: `CoSystemError` (`open`, `write`, `close`), `CoroutineError.canceled`.
  public static func append(_ bytes: [UInt8], toPath path: String) throws {
    try BlockingPool.shared.await { () throws -> Void in
      try PosixFile.write(bytes, toPath: path, flags: O_APPEND)
    }
  }

  /// Adds `string` (as UTF-8) at the end of the file at `path`; see `append(_:toPath:)`.
  public static func append(_ string: String, toPath path: String) throws {
    try append(Array(string.utf8), toPath: path)
  }

  /// The atomic replace of `write(_:toPath:atomically:)`, on the calling (pool) thread.
  private static func writeAtomically(_ bytes: [UInt8], toPath path: String)
    throws(CoSystemError)
  {
    let (directory, name) = PosixFile.split(path)
    var existing = stat()
    let keptMode: mode_t? = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : nil
    let (fd, temporary) = try createTemporaryFile(in: directory, for: name, reportedPath: path)
    do throws(CoSystemError) {
      if let keptMode, fchmod(fd, keptMode) != 0 {
        throw CoSystemError(operation: "fchmod", path: path, code: errno)
      }
      try PosixFile.writeAll(fd, bytes, path: path)
      try PosixFile.sync(fd, path: path)
    } catch {
      try? PosixFile.close(fd, path: path)
      unlink(temporary)
      throw error
    }
    do throws(CoSystemError) {
      try PosixFile.close(fd, path: path)
      if rename(temporary, path) != 0 {
        throw CoSystemError(operation: "rename", path: path, code: errno)
      }
    } catch {
      unlink(temporary)
      throw error
    }
    syncDirectory(directory)
  }

  /// Creates a new file next to `name` in `directory` that no one else has: `O_EXCL` with a
  /// name made of this process's id and a counter, another name if it exists.
  private static func createTemporaryFile(
    in directory: String, for name: String, reportedPath: String
  ) throws(CoSystemError) -> (Int32, String) {
    // The name's first 100 bytes at most: the temporary name must fit in NAME_MAX (255) too.
    let stem = String(decoding: name.utf8.prefix(100), as: UTF8.self)
    while true {
      let serial = temporarySerials.wrappingAdd(1, ordering: .relaxed).oldValue
      let temporary = "\(directory)/.\(stem).covenant-\(getpid())-\(serial)"
      do throws(CoSystemError) {
        return (try PosixFile.open(temporary, O_WRONLY | O_CREAT | O_EXCL), temporary)
      } catch  where error.code == EEXIST {
        continue
      } catch {
        throw CoSystemError(operation: "open", path: reportedPath, code: error.code)
      }
    }
  }

  private static let temporarySerials = InlineAtomic<UInt64>(0)

  /// Flushes `directory`, so that a rename in it survives a crash of the machine. Best effort:
  /// some file systems refuse `fsync` on a directory, and the data is safe either way.
  private static func syncDirectory(_ directory: String) {
    guard let fd = try? PosixFile.open(directory, O_RDONLY) else { return }
    _ = fsync(fd)
    try? PosixFile.close(fd, path: directory)
  }
}
