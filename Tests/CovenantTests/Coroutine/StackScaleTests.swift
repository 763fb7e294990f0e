import CCoroutineContext
import Covenant
import Foundation
import XCTest

/// Defaults that scale (Architecture.md, "Stacks"): 100,000 coroutines suspended at once
/// complete with default settings, on this kernel and on the stack path of kernels without
/// `MADV_GUARD_INSTALL` (forced in a child process with `COVENANT_STACK_GUARDS=mprotect`), and
/// take almost no memory mappings. Memory figures (bytes per coroutine, peak RSS of a million)
/// are the Benchmarks package's M1, M2 and M3.
final class StackScaleTests: XCTestCase {
  private static let childVariable = "COVENANT_STACK_SCALE_CHILD"

  /// 100,000; fewer under the sanitizers (ASan's shadow memory, and a ThreadSanitizer fiber per
  /// coroutine, each with a mapping of its own).
  private static var count: Int {
    TestScale.runsUnderSanitizer && !TestScale.fullSizeRequested ? 5_000 : 100_000
  }

  func testHundredThousandSuspendedCoroutinesComplete() throws {
    try suspendAndCompleteAll()
  }

  func testHundredThousandSuspendedCoroutinesCompleteWithMprotectGuards() throws {
    if ProcessInfo.processInfo.environment["COVENANT_STACK_GUARDS"] == "mprotect" {
      return try suspendAndCompleteAll()  // CI runs the suite so too (.ci/run)
    }
    let child = try ChildProcess.run(
      test: "StackScaleTests/testChildSuspendsAll", variable: Self.childVariable, value: "1",
      // (LeakSanitizer would fail the child for XCTest's own objects at exit.)
      extra: ["COVENANT_STACK_GUARDS": "mprotect", "ASAN_OPTIONS": "detect_leaks=0"])
    XCTAssertEqual(child.reason, .exit, child.stderr)
    XCTAssertEqual(child.status, 0, child.stderr)
    XCTAssertTrue(child.stderr.contains("guard markers: no"), child.stderr)
  }

  func testChildSuspendsAll() throws {
    guard ProcessInfo.processInfo.environment[Self.childVariable] == "1" else { return }
    try suspendAndCompleteAll()
    FileHandle.standardError.write(
      Data("guard markers: \(cov_stack_uses_guard_markers() != 0 ? "yes" : "no")\n".utf8))
  }

  /// Starts `count` coroutines on one serial queue, each awaiting its own pending promise; once
  /// all are suspended, checks that they hold a few stacks only, then fulfils them all.
  private func suspendAndCompleteAll() throws {
    let count = Self.count
    let queue = DispatchQueue(label: "scale")
    let promises = (0..<count).map { _ in Promise<Int>() }
    let mappingsBefore = cov_stack_mappings_in_use()
    let completed = HitCounter()
    let done = DispatchSemaphore(value: 0)
    let stacks = Box<Set<UnsafeRawPointer>>([])  // touched on `queue` only
    for (i, promise) in promises.enumerated() {
      queue.startCoroutine {
        if i % 100 == 0, let stack = runningStack() { stacks.value.insert(stack) }
        let value = try promise.await()
        XCTAssertEqual(value, i)
        completed.increment()
        if completed.value == count { done.signal() }
      }
    }
    queue.sync {}  // FIFO: every coroutine has run up to its await
    XCTAssertLessThanOrEqual(stacks.value.count, 4)
    XCTAssertLessThan(cov_stack_mappings_in_use() - mappingsBefore, 16)
    for (i, promise) in promises.enumerated() { promise.fulfill(i) }
    XCTAssertEqual(done.wait(timeout: .now() + 120), .success)
    XCTAssertEqual(completed.value, count)
  }
}
