#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Whole-file reads and writes, and files read line by line, awaited from coroutines (coobjc's
/// cokit file calls, without Foundation).
///
/// ```swift
/// DispatchQueue.main.startCoroutine {
///   let config = try CoFile.readString(atPath: "/etc/app.conf")   // the main thread runs on
///   try CoFile.write(render(config), toPath: "/var/lib/app/state")  // atomic replace
///   for line in try CoFile.lines(atPath: "/var/log/app.log") { scan(line) }
/// }
/// ```
///
/// - **One dispatch per operation.** Each call is one closure on `BlockingPool.shared`: open,
///   read or write, and close happen together on a pool thread, while the calling coroutine is
///   suspended (outside a coroutine the calling thread blocks). `lines(atPath:)` dispatches once
///   per chunk, the first with the open, the last with the close.
/// - **Errors** are `CoSystemError`s carrying the call, the path as given and `errno` by
///   number and name: `open("/etc/missing.conf"): ENOENT (No such file or directory)`.
/// - **Cancellation** is that of `BlockingPool.await`: a call still waiting for a pool thread
///   throws `CoroutineError.canceled` and does nothing; one already running completes.
/// - **Text** is UTF-8. Invalid UTF-8 is an error (`EILSEQ`), never silently replaced.
public enum CoFile {
  /// The whole file at `path`.
  ///
  /// - Throws: `CoSystemError` (`open`, `read`), `CoroutineError.canceled`.
  public static func read(atPath path: String) throws -> [UInt8] {
    try BlockingPool.shared.await { () throws -> [UInt8] in
      let fd = try PosixFile.open(path, O_RDONLY)
      defer { try? PosixFile.close(fd, path: path) }  // a read-only descriptor loses nothing
      return try PosixFile.readAll(fd, path: path)
    }
  }

  /// The whole file at `path` as UTF-8 text.
  ///
  /// - Throws: `CoSystemError` (`open`, `read`; `EILSEQ` for bytes that are not UTF-8),
  ///   `CoroutineError.canceled`.
  public static func readString(atPath path: String) throws -> String {
    try BlockingPool.shared.await { () throws -> String in
      let fd = try PosixFile.open(path, O_RDONLY)
      defer { try? PosixFile.close(fd, path: path) }
      let bytes = try PosixFile.readAll(fd, path: path)
      guard let text = bytes.withUnsafeBufferPointer({ validUTF8String($0) }) else {
        throw CoSystemError(operation: "read", path: path, code: EILSEQ)
      }
      return text
    }
  }

  /// The lines of the file at `path`, read in chunks as the iteration goes: memory stays
  /// bounded (a chunk of 256 KiB and the longest line) whatever the file's size, and the
  /// calling coroutine is suspended while a chunk is read on `BlockingPool.shared`.
  ///
  /// ```swift
  /// var errors = 0
  /// let lines = try CoFile.lines(atPath: "/var/log/app.log")
  /// for line in lines where line.contains("ERROR") { errors += 1 }
  /// if let error = lines.error { throw error }   // a read error or a cancellation
  /// ```
  ///
  /// The file is opened (and its first chunk read) by this call, so a missing file throws
  /// here. Lines end with `\n` or `\r\n` (neither is part of the line); a last line without an
  /// end counts. See ``CoLines`` for errors during the iteration.
  ///
  /// - Parameter maxLineLength: the longest line accepted, in bytes (1 MiB by default): a
  ///   longer one ends the iteration with `EMSGSIZE`, so that a file without line ends cannot
  ///   take all the memory.
  /// - Throws: `CoSystemError` (`open`, `read`), `CoroutineError.canceled`.
  public static func lines(
    atPath path: String, maxLineLength: Int = CoLines.defaultMaxLineLength
  ) throws -> CoLines {
    let lines = CoLines(
      chunkSize: 256 << 10, maxLineLength: maxLineLength,
      source: FileLineSource(path: path))
    try lines.fill()
    return lines
  }
}

/// `buffer` as a `String` if it is valid UTF-8, else `nil`.
///
/// `String(decoding:as:)` validates and repairs (invalid bytes become U+FFFD); the copy it
/// made is the input unchanged exactly when there was nothing to repair.
func validUTF8String(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
  let text = String(decoding: buffer, as: UTF8.self)
  guard text.utf8.count == buffer.count else { return nil }
  let same =
    text.utf8.withContiguousStorageIfAvailable { decoded in
      decoded.count == 0 || memcmp(decoded.baseAddress!, buffer.baseAddress!, buffer.count) == 0
    } ?? text.utf8.elementsEqual(buffer)
  return same ? text : nil
}
