#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The lines of a file (`CoFile.lines(atPath:)`) or of a child process's output
/// (`CoProcess.standardOutputLines`), read chunk by chunk as the iteration asks for them: a
/// `Sequence` (single pass) whose `next()` suspends the calling coroutine while a chunk is read,
/// and blocks the calling thread outside coroutines.
///
/// ```swift
/// let lines = try CoFile.lines(atPath: "/var/log/app.log")
/// for line in lines where line.hasPrefix("ERROR") { report(line) }
/// if let error = lines.error { throw error }      // the loop ended early
///
/// while let line = try lines.nextLine() { … }      // or: errors thrown where they happen
/// ```
///
/// - **Bounded memory.** It holds one chunk and the line being assembled, never more: a line
///   longer than `maxLineLength` bytes ends the iteration with a `CoSystemError` `EMSGSIZE`.
///   Whatever has not been asked for stays where it is: in the file, or in the pipe, where it
///   stops a child process that writes faster than the lines are read (back-pressure).
/// - **Line ends** are `\n` and `\r\n`, not part of the line; a last line without one counts.
///   Lines are UTF-8; one that is not ends the iteration with `EILSEQ`.
/// - **Errors.** `for line in lines` cannot throw, so the loop ends at the first error (a read
///   that failed, an invalid line, the coroutine's cancellation) and `error` says which; at a
///   normal end it is `nil`. `nextLine()` throws the error instead. After an error, `next()`
///   returns `nil` and `nextLine()` throws it again.
/// - **One consumer.** Iterate from one coroutine (or thread) at a time; a call of `next()`
///   while another is in progress stops the program with a message.
/// - **Closing.** The file or pipe is closed at the end, on an error, by `close()`, or when the
///   object is released.
public final class CoLines: Sequence, IteratorProtocol, @unchecked Sendable {
  /// The default of `maxLineLength`: 1 MiB.
  public static let defaultMaxLineLength = 1 << 20

  /// The longest line accepted, in bytes (without its end).
  public let maxLineLength: Int

  /// What ended the iteration early: a `CoSystemError` (a failed read, `EMSGSIZE` for a line
  /// over `maxLineLength`, `EILSEQ` for one that is not UTF-8) or `CoroutineError.canceled`;
  /// `nil` while it goes on and after a normal end. Read it from the iterating code.
  public private(set) var error: (any Error)?

  private let source: any LineSource
  /// How much a read asks for at a time.
  private let chunkSize: Int
  /// Bytes read and not yet returned as lines: `[start, end)` of `buffer`.
  private var buffer: UnsafeMutableRawPointer
  private var capacity: Int
  private var start = 0
  private var end = 0
  private var sourceEnded = false
  /// Set while a call is in progress: a second consumer is caught, not a data race.
  private let busy = InlineAtomic<Bool>(false)

  init(chunkSize: Int, maxLineLength: Int, source: any LineSource) {
    self.chunkSize = chunkSize
    self.maxLineLength = Swift.max(1, maxLineLength)
    self.source = source
    capacity = chunkSize
    buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 16)
  }

  deinit {
    source.close()
    buffer.deallocate()
  }

  /// The next line, or `nil` at the end of the input or after an error (see `error`).
  public func next() -> String? {
    try? nextLine()
  }

  /// The next line, or `nil` at the end of the input; suspends the calling coroutine while a
  /// chunk is read.
  ///
  /// - Throws: `CoSystemError` (a failed read, `EMSGSIZE`, `EILSEQ`) or
  ///   `CoroutineError.canceled`; after that, the same error again at every call.
  public func nextLine() throws -> String? {
    if busy.exchange(true, ordering: .acquiring) {
      fatalError("CoLines: next() called while another call is in progress (one consumer)")
    }
    defer { busy.store(false, ordering: .releasing) }
    if let error { throw error }
    do {
      return try assembleLine()
    } catch {
      self.error = error
      sourceEnded = true
      source.close()
      throw error
    }
  }

  /// Stops the iteration: closes the file or pipe (a child process writing to it then gets
  /// `EPIPE` or `SIGPIPE`). Later calls return `nil`.
  public func close() {
    if busy.exchange(true, ordering: .acquiring) {
      fatalError("CoLines: close() called while next() is in progress (one consumer)")
    }
    defer { busy.store(false, ordering: .releasing) }
    sourceEnded = true
    start = end
    source.close()
  }

  /// Reads the first chunk now (what `CoFile.lines(atPath:)` throws from).
  func fill() throws {
    try readChunk()
  }

  private func assembleLine() throws -> String? {
    while true {
      let pending = end - start
      if pending > 0, let newline = memchr(buffer + start, 0x0A, pending) {
        let lineEnd = buffer.distance(to: newline)
        var textEnd = lineEnd
        if textEnd > start && buffer.load(fromByteOffset: textEnd - 1, as: UInt8.self) == 0x0D {
          textEnd -= 1
        }
        if textEnd - start > maxLineLength {
          throw CoSystemError(operation: "read line", path: source.path, code: EMSGSIZE)
        }
        let line = try text(from: start, to: textEnd)
        start = lineEnd + 1
        return line
      }
      // No line end in what is left: a line longer than allowed (a `\r` may still come)?
      if pending > maxLineLength + 1 || (pending == maxLineLength + 1 && lastByte != 0x0D) {
        throw CoSystemError(operation: "read line", path: source.path, code: EMSGSIZE)
      }
      if sourceEnded {
        guard pending > 0 else { return nil }
        if pending > maxLineLength {
          throw CoSystemError(operation: "read line", path: source.path, code: EMSGSIZE)
        }
        let line = try text(from: start, to: end)
        start = end
        return line
      }
      try readChunk()
    }
  }

  private var lastByte: UInt8 { buffer.load(fromByteOffset: end - 1, as: UInt8.self) }

  /// The bytes `[from, to)` of the buffer as a line.
  private func text(from: Int, to: Int) throws(CoSystemError) -> String {
    let bytes = UnsafeBufferPointer(
      start: (buffer + from).assumingMemoryBound(to: UInt8.self), count: to - from)
    guard let text = validUTF8String(bytes) else {
      throw CoSystemError(operation: "read line", path: source.path, code: EILSEQ)
    }
    return text
  }

  /// Makes room after the pending bytes (moving them to the front, growing the buffer while
  /// a long line needs it) and reads one chunk there.
  private func readChunk() throws {
    if start > 0 {
      if end > start { memmove(buffer, buffer + start, end - start) }
      end -= start
      start = 0
    }
    if capacity - end < chunkSize / 2 {
      capacity = Swift.max(capacity * 2, end + chunkSize)
      buffer = reallocate(buffer, keeping: end, capacity: capacity)
    }
    let count = try source.read(into: buffer + end, count: capacity - end)
    if count == 0 { sourceEnded = true } else { end += count }
  }
}

/// Where `CoLines` gets its bytes: a file read on the blocking pool, or a pipe from a child.
protocol LineSource: AnyObject {
  /// What errors name (the file's path, the child's executable).
  var path: String { get }

  /// Reads at most `count` bytes into `buffer`, suspending the calling coroutine (or blocking
  /// the thread) until some are there; 0 at the end of the input, after which the source has
  /// closed itself.
  func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int

  /// Closes what is open; harmless when already closed.
  func close()
}
