#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The bytes of a file for `CoFile.lines(atPath:)`: one `BlockingPool.shared` dispatch per
/// chunk, the first of which opens the file and the last of which (the end, or an error)
/// closes it.
///
/// `@unchecked Sendable`: `fd` is used by one consumer's calls at a time (`CoLines` checks),
/// each of which waits for the pool closure it dispatched, so the pool thread and the
/// consumer's thread take turns, ordered by the pool's lock and the waiter's wake-up.
final class FileLineSource: LineSource, @unchecked Sendable {
  let path: String
  private var fd: Int32 = -1
  private var isClosed = false

  init(path: String) { self.path = path }

  func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
    if isClosed { return 0 }
    // The buffer belongs to the `CoLines` whose `next()` waits for this closure: a cancelled
    // caller still waits for a closure that has started (`BlockingPool.await`).
    let target = UncheckedSendable(buffer)
    return try BlockingPool.shared.await { [self] () throws -> Int in
      do throws(CoSystemError) {
        if fd < 0 { fd = try PosixFile.open(path, O_RDONLY) }
        let count = try PosixFile.read(fd, into: target.value, count: count, path: path)
        if count == 0 { close() }
        return count
      } catch {
        close()
        throw error
      }
    }
  }

  func close() {
    isClosed = true
    guard fd >= 0 else { return }
    try? PosixFile.close(fd, path: path)  // read-only: nothing to lose
    fd = -1
  }
}
