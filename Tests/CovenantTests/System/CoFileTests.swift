import Covenant
import Dispatch
import Foundation
import XCTest

final class CoFileTests: XCTestCase {
  private var directory: TemporaryDirectory!

  override func setUpWithError() throws { directory = try TemporaryDirectory() }
  override func tearDown() { directory.remove() }

  /// Bytes and text written are read back the same, inside and outside coroutines.
  func testRoundTrip() throws {
    let path = directory.file("data.bin")
    let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    try inCoroutine { try CoFile.write(bytes, toPath: path) }
    XCTAssertEqual(try inCoroutine { try CoFile.read(atPath: path) }, bytes)
    XCTAssertEqual(try CoFile.read(atPath: path), bytes)  // outside a coroutine: blocks
    let text = "héllo, wörld ✓\nsecond line\n"
    try inCoroutine { try CoFile.write(text, toPath: path) }
    XCTAssertEqual(try inCoroutine { try CoFile.readString(atPath: path) }, text)
    try inCoroutine { try CoFile.write([UInt8](), toPath: path) }
    XCTAssertEqual(try CoFile.read(atPath: path), [])
  }

  /// The atomic write replaces the file whole, keeps its permissions, and leaves no temporary
  /// file behind; the in-place write truncates.
  func testAtomicWriteReplacesAndKeepsPermissions() throws {
    let path = directory.file("config")
    try CoFile.write("old content, longer than the new one", toPath: path)
    XCTAssertEqual(chmod(path, 0o640), 0)
    try inCoroutine { try CoFile.write("new", toPath: path) }
    XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "new")
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o640)
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["config"])
    try inCoroutine { try CoFile.write("in place", toPath: path, atomically: false) }
    XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "in place")
  }

  /// Appends go to the end, creating the file first.
  func testAppend() throws {
    let path = directory.file("log")
    try inCoroutine {
      try CoFile.append("one\n", toPath: path)
      try CoFile.append(Array("two\n".utf8), toPath: path)
    }
    XCTAssertEqual(try CoFile.readString(atPath: path), "one\ntwo\n")
  }

  /// Failures carry the operation, the path as given and errno's name.
  func testErrorsNameThePathAndErrno() throws {
    let missing = directory.file("missing")
    XCTAssertThrowsError(try inCoroutine { try CoFile.read(atPath: missing) }) { error in
      guard let error = error as? CoSystemError else { return XCTFail("\(error)") }
      XCTAssertEqual(error.operation, "open")
      XCTAssertEqual(error.path, missing)
      XCTAssertEqual(error.code, ENOENT)
      XCTAssertEqual(error.name, "ENOENT")
      XCTAssertEqual(
        error.description, "open(\"\(missing)\"): ENOENT (No such file or directory)")
    }
    XCTAssertThrowsError(try CoFile.read(atPath: directory.path)) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "EISDIR")
      XCTAssertEqual((error as? CoSystemError)?.operation, "read")
    }
    let inMissingDirectory = directory.file("nowhere/file")
    XCTAssertThrowsError(try CoFile.write("x", toPath: inMissingDirectory)) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "ENOENT")
      XCTAssertEqual((error as? CoSystemError)?.path, inMissingDirectory)
    }
    let file = directory.file("plain")
    try CoFile.write("x", toPath: file)
    XCTAssertThrowsError(try CoFile.append("y", toPath: file + "/below")) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "ENOTDIR")
    }
    XCTAssertThrowsError(try CoFile.lines(atPath: missing)) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "ENOENT")
    }
  }

  /// Text that is not UTF-8 is an error, never silently repaired.
  func testInvalidUTF8IsAnError() throws {
    let path = directory.file("latin1")
    try CoFile.write([0x63, 0x61, 0x66, 0xE9, 0x0A], toPath: path)  // "café" in Latin-1
    XCTAssertThrowsError(try CoFile.readString(atPath: path)) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "EILSEQ")
    }
    // A truncated sequence whose replacement has the same length must be caught too.
    try CoFile.write([0xF0, 0x9F, 0x98, 0x41], toPath: path)
    XCTAssertThrowsError(try CoFile.readString(atPath: path))
    try CoFile.write([0x6F, 0x6B, 0x0A, 0xFF, 0x0A], toPath: path)
    let lines = try CoFile.lines(atPath: path)
    XCTAssertEqual(lines.next(), "ok")
    XCTAssertNil(lines.next())
    XCTAssertEqual((lines.error as? CoSystemError)?.name, "EILSEQ")
    XCTAssertThrowsError(try lines.nextLine())  // the same error again
  }

  /// Lines end at LF or CRLF; empty lines count; a last line without an end counts.
  func testLinesSplitting() throws {
    let path = directory.file("lines")
    try CoFile.write("a\r\n\nb\nlast", toPath: path)
    XCTAssertEqual(
      try inCoroutine { Array(try CoFile.lines(atPath: path)) }, ["a", "", "b", "last"])
    try CoFile.write("", toPath: path)
    XCTAssertEqual(Array(try CoFile.lines(atPath: path)), [])
    try CoFile.write("only\n", toPath: path)
    let lines = try CoFile.lines(atPath: path)
    XCTAssertEqual(try lines.nextLine(), "only")
    XCTAssertNil(try lines.nextLine())
    XCTAssertNil(lines.error)
  }

  /// A line longer than the limit ends the iteration with EMSGSIZE instead of growing memory.
  func testLineLongerThanTheLimit() throws {
    let path = directory.file("long")
    try CoFile.write(
      Array("short\n".utf8) + [UInt8](repeating: 0x78, count: 5000) + Array("\nafter\n".utf8),
      toPath: path)
    let lines = try CoFile.lines(atPath: path, maxLineLength: 4096)
    XCTAssertEqual(Array(lines).map(\.utf8.count), [5])
    XCTAssertEqual((lines.error as? CoSystemError)?.name, "EMSGSIZE")
    let longer = Array(try CoFile.lines(atPath: path, maxLineLength: 5000))
    XCTAssertEqual(longer.map(\.utf8.count), [5, 5000, 5])
  }

  /// One pool dispatch per whole-file operation, one per chunk of lines (the first opening the
  /// file, the last closing it).
  func testOneDispatchPerOperation() throws {
    let path = directory.file("chunks")
    let line = String(repeating: "z", count: 99) + "\n"
    let chunk = 256 << 10
    let lineCount = 3 * chunk / line.utf8.count + 10  // a little over three chunks
    try CoFile.write(String(repeating: line, count: lineCount), toPath: path)
    let pool = BlockingPool.shared
    var before = pool.counters.completed
    _ = try CoFile.read(atPath: path)
    XCTAssertEqual(pool.counters.completed - before, 1)
    try CoFile.append("", toPath: path)
    XCTAssertEqual(pool.counters.completed - before, 2)
    before = pool.counters.completed
    let count = try inCoroutine { () -> Int in
      var count = 0
      for _ in try CoFile.lines(atPath: path) { count += 1 }
      return count
    }
    XCTAssertEqual(count, lineCount)
    // Four chunks with data, then the read that finds the end (and closes).
    XCTAssertEqual(pool.counters.completed - before, 5)
  }

  /// While the next chunk is read, the iterating coroutine is suspended: its serial queue runs
  /// other work. The file is a FIFO whose writer holds the second chunk back until the test has
  /// run a block on that queue.
  func testLinesSuspendTheCoroutineBetweenChunks() throws {
    let path = directory.file("fifo")
    XCTAssertEqual(mkfifo(path, 0o600), 0)
    let queue = DispatchQueue(label: "lines.serial")
    let received = Recorder<String>()
    let reader = queue.coroutineFuture {
      for line in try CoFile.lines(atPath: path) { received.append(line) }
    }
    let writer = open(path, O_WRONLY)  // meets the reader's open (on a pool thread)
    XCTAssertGreaterThanOrEqual(writer, 0)
    XCTAssertEqual(write(writer, "first\n", 6), 6)
    waitUntil { received.elements == ["first"] }
    // The reader now waits for its next chunk, in a pool thread's read: the queue is free.
    let ran = DispatchSemaphore(value: 0)
    queue.async { ran.signal() }
    XCTAssertEqual(ran.wait(timeout: .now() + 10), .success, "the queue is blocked")
    XCTAssertEqual(write(writer, "second\n", 7), 7)
    close(writer)
    _ = try wait(for: reader)
    XCTAssertEqual(received.elements, ["first", "second"])
  }

  /// A cancelled iteration ends, and says why.
  func testCancelledIterationEnds() throws {
    let path = directory.file("cancel")
    try CoFile.write(
      String(repeating: String(repeating: "c", count: 1000) + "\n", count: 2000), toPath: path)
    let scope = CoScope()
    let seen = Locked((lines: 0, error: ""))
    DispatchQueue.global().startCoroutine(in: scope) {
      let lines = try CoFile.lines(atPath: path)
      for _ in lines {
        let count = seen.withLock { seen -> Int in
          seen.lines += 1
          return seen.lines
        }
        if count == 10 { scope.cancel() }
      }
      seen.withLock { $0.error = "\(lines.error.map { "\($0)" } ?? "none")" }
    }
    try scope.join()
    let (lines, error) = seen.withLock { ($0.lines, $0.error) }
    XCTAssertLessThan(lines, 2000)
    XCTAssertEqual(error, "\(CoroutineError.canceled)")
  }

  /// A file many times larger than the memory bound, read by lines: memory stays bounded. The
  /// file is sparse (holes read as zeros) with a line end every 64 KiB, so it takes no time to
  /// make. 256 MiB here (64 MiB under sanitizers): moving 1 GiB through `read` alone takes
  /// seconds on a loaded 2-core machine, so the 1 GiB case is benchmark B3 (Benchmarks/).
  func testLargeFileByLinesInBoundedMemory() throws {
    let path = directory.file("sparse")
    let size = TestScale.runsUnderSanitizer ? 64 << 20 : 256 << 20
    let lineLength = 64 << 10
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    XCTAssertGreaterThanOrEqual(fd, 0)
    var newline: UInt8 = 0x0A
    for offset in stride(from: lineLength - 1, to: size, by: lineLength) {
      XCTAssertEqual(pwrite(fd, &newline, 1, off_t(offset)), 1)
    }
    close(fd)
    defer { unlink(path) }
    let before = ProcInspector.residentKiB
    let (count, peak) = try inCoroutine { () -> (Int, Int) in
      var count = 0
      var peak = 0
      for line in try CoFile.lines(atPath: path) {
        precondition(line.utf8.count == lineLength - 1)
        count += 1
        if count % 1024 == 0 { peak = max(peak, ProcInspector.residentKiB) }
      }
      return (count, peak)
    }
    XCTAssertEqual(count, size / lineLength)
    XCTAssertLessThan(peak - before, 32 << 10, "resident memory grew by \(peak - before) KiB")
  }

  // MARK: Helpers

  private func inCoroutine<T>(
    on queue: DispatchQueue = .global(), _ body: @escaping @Sendable () throws -> T
  ) throws -> T {
    try wait(for: queue.coroutineFuture(body))
  }

  private func wait<T>(for future: CoFuture<T>) throws -> T {
    let done = DispatchSemaphore(value: 0)
    future.whenComplete { _ in done.signal() }
    XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "coroutine did not finish")
    return try XCTUnwrap(future.result).get()
  }
}
