import Covenant
import Dispatch
import Foundation
import XCTest

final class CoProcessTests: XCTestCase {
  /// `run` returns the exit code and both outputs, collected whole.
  func testRunCollectsOutputAndStatus() throws {
    let result = try inCoroutine {
      try CoProcess.run("/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
    }
    XCTAssertEqual(result.status, .exited(3))
    XCTAssertFalse(result.status.isSuccess)
    XCTAssertEqual(String(decoding: result.standardOutput, as: UTF8.self), "out\n")
    XCTAssertEqual(String(decoding: result.standardError, as: UTF8.self), "err\n")
  }

  /// Input, environment and working directory reach the child; a name is found in PATH.
  func testRunWithInputEnvironmentAndWorkingDirectory() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let echoed = try inCoroutine {
      try CoProcess.run("cat", input: Array("line one\nline two".utf8))
    }
    XCTAssertEqual(echoed.status, .exited(0))
    XCTAssertEqual(String(decoding: echoed.standardOutput, as: UTF8.self), "line one\nline two")
    let script = "echo \"$GREETING\"; pwd -P; echo \"${HOME-unset}\""
    let result = try inCoroutine {
      try CoProcess.run(
        "sh", arguments: ["-c", script], environment: ["GREETING": "hello there"],
        workingDirectory: directory.path)
    }
    let real = URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
    XCTAssertEqual(
      String(decoding: result.standardOutput, as: UTF8.self), "hello there\n\(real)\nunset\n")
  }

  /// A big output on both pipes at once does not deadlock `run` (both are drained together).
  func testRunDrainsBothPipesTogether() throws {
    let result = try inCoroutine {
      try CoProcess.run(
        "sh", arguments: ["-c", "head -c 1000000 /dev/zero >&2; head -c 1000000 /dev/zero"])
    }
    XCTAssertEqual(result.status, .exited(0))
    XCTAssertEqual(result.standardOutput.count, 1_000_000)
    XCTAssertEqual(result.standardError.count, 1_000_000)
  }

  /// Outside a coroutine, `run` blocks the thread.
  func testRunOutsideACoroutine() throws {
    let result = try CoProcess.run("echo", arguments: ["plain"])
    XCTAssertEqual(result.standardOutput, Array("plain\n".utf8))
  }

  /// A missing executable, one that may not run, and a missing directory throw clear errors.
  func testStartFailuresThrowWithPathAndErrnoName() throws {
    XCTAssertThrowsError(try CoProcess.run("covenant-no-such-program")) { error in
      let error = error as? CoSystemError
      XCTAssertEqual(error?.name, "ENOENT")
      XCTAssertEqual(error?.path, "covenant-no-such-program")
    }
    XCTAssertThrowsError(try CoProcess.start("/nonexistent/program")) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "ENOENT")
      XCTAssertEqual((error as? CoSystemError)?.operation, "posix_spawn")
    }
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let text = directory.file("not-a-program.txt")
    try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
    XCTAssertThrowsError(try CoProcess.run(text)) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "EACCES")
    }
    XCTAssertThrowsError(try CoProcess.run("true", workingDirectory: directory.file("missing"))) {
      error in
      XCTAssertEqual((error as? CoSystemError)?.operation, "chdir")
      XCTAssertEqual((error as? CoSystemError)?.name, "ENOENT")
    }
    XCTAssertTrue(
      "\(CoSystemError(operation: "open", path: "/x", code: ENOENT))".contains("ENOENT"))
  }

  /// A handle streams output lines and takes input; `wait` returns the exit status.
  func testStartStreamsLinesAndTakesInput() throws {
    let lines = try inCoroutine { () -> [String] in
      let sort = try CoProcess.start("sort")
      try sort.write(toStandardInput: "pear\napple\n")
      try sort.write(toStandardInput: Array("fig\n".utf8))
      sort.closeStandardInput()
      let sorted = Array(sort.standardOutputLines)
      XCTAssertEqual(try sort.wait(), .exited(0))
      XCTAssertEqual(sort.exitStatus, .exited(0))
      return sorted
    }
    XCTAssertEqual(lines, ["apple", "fig", "pear"])
    let errors = try inCoroutine { () -> [String] in
      let child = try CoProcess.start("sh", arguments: ["-c", "echo one >&2; echo two >&2"])
      defer { _ = try? child.wait() }
      return Array(child.standardErrorLines)
    }
    XCTAssertEqual(errors, ["one", "two"])
  }

  /// `terminate` sends SIGTERM; the status says a signal ended the child.
  func testTerminateReportsTheSignal() throws {
    let status = try inCoroutine { () -> CoProcess.ExitStatus in
      let sleeper = try CoProcess.start("sleep", arguments: ["30"])
      XCTAssertNil(sleeper.exitStatus)
      sleeper.terminate()
      return try sleeper.wait()
    }
    XCTAssertEqual(status, .signaled(SIGTERM))
    XCTAssertEqual(status.description, "killed by signal \(SIGTERM) (SIGTERM)")
  }

  /// Cancelling a coroutine awaiting `run` terminates the child, which is reaped: its /proc
  /// entry goes (a zombie would stay).
  func testCancelledRunTerminatesAndReapsTheChild() throws {
    try checkCancelledRunReaps(script: "exec sleep 30", gracePeriod: .seconds(5))
  }

  /// A child that ignores SIGTERM is killed after the grace period, and reaped.
  func testChildIgnoringSIGTERMIsKilledAfterTheGracePeriod() throws {
    try checkCancelledRunReaps(
      script: "trap '' TERM; exec sleep 30", gracePeriod: .milliseconds(100))
  }

  /// Cancelling `wait()` terminates the child too.
  func testCancelledWaitTerminatesTheChild() throws {
    let sleeper = try CoProcess.start("sleep", arguments: ["30"])
    let scope = CoScope()
    let outcome = Recorder<String>()
    DispatchQueue.global().startCoroutine(in: scope) {
      do {
        _ = try sleeper.wait()
        outcome.append("returned")
      } catch CoroutineError.canceled {
        outcome.append("canceled")
      }
    }
    Thread.sleep(forTimeInterval: 0.05)
    scope.cancel()
    try scope.join()
    XCTAssertEqual(outcome.elements, ["canceled"])
    XCTAssertEqual(try sleeper.wait(), .signaled(SIGTERM))
    waitUntil { ProcInspector.state(of: sleeper.processIdentifier) == nil }
  }

  /// Without a pidfd (kernels before 5.3, seccomp filters), exits are polled: children are
  /// still reaped and waited for, and a cancelled run still terminates its child.
  func testExitsArePolledWithoutAPidfd() throws {
    CoProcess.pollsExits.store(true, ordering: .relaxed)
    defer { CoProcess.pollsExits.store(false, ordering: .relaxed) }
    let result = try inCoroutine {
      try CoProcess.run("sh", arguments: ["-c", "echo polled; exit 4"])
    }
    XCTAssertEqual(result.status, .exited(4))
    XCTAssertEqual(result.standardOutput, Array("polled\n".utf8))
    let sleeper = try CoProcess.start("sleep", arguments: ["30"])
    sleeper.terminate()
    XCTAssertEqual(try sleeper.wait(), .signaled(SIGTERM))
    waitUntil { ProcInspector.state(of: sleeper.processIdentifier) == nil }
    try checkCancelledRunReaps(script: "exec sleep 30", gracePeriod: .seconds(5))
  }

  /// Releasing a handle closes the child's input: `cat` reads its end and exits.
  func testReleasingTheHandleClosesTheChildsInput() throws {
    var pid: Int32 = 0
    try {
      let cat = try CoProcess.start("cat")
      pid = cat.processIdentifier
      try cat.write(toStandardInput: "unread\n")
    }()
    waitUntil { ProcInspector.state(of: pid) == nil }
  }

  /// A child whose handle is released while it runs is still reaped when it exits.
  func testAbandonedChildIsReapedWhenItExits() throws {
    var pid: Int32 = 0
    try {
      let child = try CoProcess.start("sleep", arguments: ["0.1"])
      pid = child.processIdentifier
    }()
    XCTAssertNotNil(ProcInspector.state(of: pid))
    waitUntil { ProcInspector.state(of: pid) == nil }
  }

  /// A child writing ~100 MB of lines to a consumer that stops reading blocks once the pipe is
  /// full: what it has written stays bounded, and so does this process's memory.
  func testStoppedConsumerBlocksTheChildWithBoundedMemory() throws {
    let seq = try CoProcess.start("seq", arguments: ["1", "13000000"])  // ~106 MB of lines
    let pid = seq.processIdentifier
    let before = ProcInspector.residentKiB
    let first = try inCoroutine { Array(seq.standardOutputLines.prefix(10)) }
    XCTAssertEqual(first, (1...10).map(String.init))
    // The child fills the pipe, then blocks in write: its written count stops moving.
    var written = writtenBytes(of: pid)
    waitUntil {
      Thread.sleep(forTimeInterval: 0.1)
      let now = writtenBytes(of: pid)
      defer { written = now }
      return now == written
    }
    XCTAssertEqual(ProcInspector.state(of: pid), "S")  // sleeping in write, not running
    if let written { XCTAssertLessThan(written, 1 << 20, "the child kept writing") }
    XCTAssertNil(seq.exitStatus)
    XCTAssertLessThan(ProcInspector.residentKiB - before, 16 << 10, "memory grew")
    // Reading again lets it go on.
    let more = try inCoroutine { Array(seq.standardOutputLines.prefix(100_000)) }
    XCTAssertEqual(more.last, "100010")
    XCTAssertGreaterThan(writtenBytes(of: pid) ?? .max, written ?? 0)
    seq.terminate()
    XCTAssertEqual(try seq.wait(), .signaled(SIGTERM))
  }

  /// A line without an end does not take all the memory: it ends the iteration with EMSGSIZE.
  func testLineLongerThanTheLimitEndsTheIteration() throws {
    let child = try CoProcess.start(
      "head", arguments: ["-c", "3000000", "/dev/zero"], maxLineLength: 1 << 20)
    let lines = child.standardOutputLines
    XCTAssertThrowsError(try inCoroutine { try lines.nextLine() }) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "EMSGSIZE")
    }
    XCTAssertNil(lines.next())
    XCTAssertEqual((lines.error as? CoSystemError)?.name, "EMSGSIZE")
    child.terminate()
    _ = try child.wait()
  }

  /// Writing to a child that has exited fails with EPIPE (no SIGPIPE stops the process).
  func testWriteToAnExitedChildThrowsEPIPE() throws {
    let child = try CoProcess.start("true")
    XCTAssertEqual(try child.wait(), .exited(0))
    XCTAssertThrowsError(try inCoroutine { try child.write(toStandardInput: "late\n") }) { error in
      XCTAssertEqual((error as? CoSystemError)?.name, "EPIPE")
    }
  }

  /// Many children and pipes at once: one watcher thread, no thread per pipe.
  func testOneWatcherThreadForManyChildren() throws {
    _ = try CoProcess.run("true")  // the watcher exists
    let threadsBefore = threadCount()
    let children = try (0..<20).map { _ in try CoProcess.start("cat") }
    let queue = DispatchQueue(label: "watchers", attributes: .concurrent)
    let readers = children.map { child in
      queue.coroutineFuture { () -> [String] in Array(child.standardOutputLines) }
    }
    Thread.sleep(forTimeInterval: 0.1)  // every reader waits on its pipe now
    XCTAssertEqual(ProcInspector.threads(named: "cov-watcher"), 1)
    XCTAssertLessThanOrEqual(threadCount() - threadsBefore, 4, "threads grew with the pipes")
    for (index, child) in children.enumerated() {
      try child.write(toStandardInput: "child \(index)\n")
      child.closeStandardInput()
    }
    for (index, reader) in readers.enumerated() {
      XCTAssertEqual(try wait(for: reader), ["child \(index)"])
      XCTAssertEqual(try children[index].wait(), .exited(0))
    }
  }

  // MARK: Helpers

  private func checkCancelledRunReaps(
    script: String, gracePeriod: DispatchTimeInterval, file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let pidFile = directory.file("pid")
    let scope = CoScope()
    let outcome = Recorder<String>()
    DispatchQueue.global().startCoroutine(in: scope) {
      do {
        _ = try CoProcess.run(
          "sh", arguments: ["-c", "echo $$ > '\(pidFile)'; \(script)"],
          terminationGracePeriod: gracePeriod)
        outcome.append("returned")
      } catch CoroutineError.canceled {
        outcome.append("canceled")
      }
    }
    var pid: Int32?
    waitUntil(file: file, line: line) {
      pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
        Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      return pid != nil
    }
    guard let pid else { return }
    Thread.sleep(forTimeInterval: 0.05)  // let the shell reach `sleep`
    scope.cancel()
    try scope.join()
    XCTAssertEqual(outcome.elements, ["canceled"], file: file, line: line)
    waitUntil(file: file, line: line) { ProcInspector.state(of: pid) == nil }
  }

  /// What process `pid` has written so far (`wchar` of /proc/PID/io), `nil` if unreadable.
  private func writtenBytes(of pid: Int32) -> Int? {
    guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else {
      return nil
    }
    return io.split(separator: "\n").first { $0.hasPrefix("wchar:") }.flatMap {
      Int($0.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
    }
  }

  private func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
  }

  /// Runs `body` in a coroutine and returns what it returns (or throws what it throws).
  private func inCoroutine<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    try wait(for: DispatchQueue.global().coroutineFuture(body))
  }

  private func wait<T>(for future: CoFuture<T>) throws -> T {
    let done = DispatchSemaphore(value: 0)
    future.whenComplete { _ in done.signal() }
    XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "coroutine did not finish")
    return try XCTUnwrap(future.result).get()
  }
}
